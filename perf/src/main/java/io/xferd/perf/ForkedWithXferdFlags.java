package io.xferd.perf;

import org.openjdk.jmh.annotations.Fork;

/**
 * Base of every benchmark here: one fork with a small fixed heap (every buffer a benchmark moves is off-heap:
 * memfd or mapped file). The JVM flags of {@code jvm.flags} (the Chronicle exports/opens, native access for the
 * FFM bindings, and {@code chronicle.analytics.disable} so that no fork ever phones home) reach every fork through
 * {@link BenchmarkMain}, the jar's entry point. JMH takes {@link Fork} from the superclass when a benchmark has none.
 */
@Fork(value = 1, jvmArgsAppend = {
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Xms512m",
    "-Xmx512m",
    "-XX:+AlwaysPreTouch"
})
public abstract class ForkedWithXferdFlags
{
}
