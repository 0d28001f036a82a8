"""`accelplane report`: GPU capacity per queue and per Flink cluster.

`data` builds the report from a validated model; `tables` writes it as text, Markdown or JSON;
`svg` draws it as a chart.
"""
