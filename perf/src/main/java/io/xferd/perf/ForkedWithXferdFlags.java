package io.xferd.perf;

import org.openjdk.jmh.annotations.Fork;

/**
 * Base of every benchmark here: JMH forks carry the JVM flags checked on JDK 25 (see JVM-FLAGS.md: the
 * Chronicle exports/opens, native access for the FFM bindings, and {@code chronicle.analytics.disable} so
 * that no fork ever phones home). JMH takes {@link Fork} from the superclass when a benchmark has none.
 * The heap is small and fixed: every buffer a benchmark moves is off-heap (memfd or mapped file).
 */
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow",
    "-Dchronicle.analytics.disable=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Xms512m",
    "-Xmx512m",
    "-XX:+AlwaysPreTouch"
})
public abstract class ForkedWithXferdFlags
{
}
