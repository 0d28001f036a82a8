/*
 * Test job for tests/gpu_slots/test_over_ask_flink.py: one source in a slot sharing group that
 * asks for one "gpu" (an external resource no TaskManager of the test cluster has), with
 * checkpointing on (so Flink's default restart strategy would be exponential-delay, unbounded).
 */

import org.apache.flink.api.common.operators.SlotSharingGroup;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;

public class OverAskJob {

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(10_000L);
        SlotSharingGroup gpu =
                SlotSharingGroup.newBuilder("embed")
                        .setCpuCores(0.1)
                        .setTaskHeapMemoryMB(16)
                        .setExternalResource("gpu", 1.0)
                        .build();
        env.registerSlotSharingGroup(gpu);
        env.fromSequence(0, 10).slotSharingGroup(gpu).addSink(new DiscardingSink<>()).slotSharingGroup(gpu);
        env.execute("accelplane-over-ask");
    }
}
