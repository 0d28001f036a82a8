"""A small client of a JobManager's REST API (the endpoints the harness waits on)."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass


@dataclass(frozen=True)
class RestClient:
    """JSON ``GET`` requests against ``url`` (e.g. ``http://localhost:8081``)."""

    url: str

    def get_json(self, path: str, timeout: float = 5.0) -> object:
        """The decoded JSON body of ``GET <url><path>`` (raises ``URLError``/``OSError`` when down)."""
        with urllib.request.urlopen(self.url + path, timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))

    def taskmanagers(self) -> list[dict[str, object]]:
        """``GET /taskmanagers`` entries."""
        data = self.get_json("/taskmanagers")
        assert isinstance(data, dict)
        tms = data.get("taskmanagers", [])
        assert isinstance(tms, list)
        return tms

    def total_slots(self) -> int:
        """``slots-total`` of ``GET /overview``."""
        data = self.get_json("/overview")
        assert isinstance(data, dict)
        return int(data["slots-total"])
