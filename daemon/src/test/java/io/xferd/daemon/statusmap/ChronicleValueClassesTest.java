package io.xferd.daemon.statusmap;

import net.openhft.chronicle.values.Values;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

class ChronicleValueClassesTest
{
    @Test
    void chronicleMapUsesTheNativeClassesCompiledByTheBuildNotJavacAtRunTime(@TempDir final Path directory)
        throws Exception
    {
        try (var map = StatusMapFile.open(directory.resolve(StatusMapFile.FILE), 64))
        {
            map.put("daemon", "{}");
            assertEquals("{}", map.get("daemon"));
        }
        for (final String name : ChronicleValueClasses.VALUE_INTERFACES)
        {
            final Class<?> nativeClass = Values.nativeClassFor(Class.forName(name));
            // a class Chronicle compiles itself is defined from bytes without a code source; the build's comes from
            // the daemon's jar or classes directory
            assertNotNull(nativeClass.getProtectionDomain().getCodeSource(), nativeClass + " was compiled at run time");
            assertNotNull(nativeClass.getProtectionDomain().getCodeSource().getLocation());
        }
    }
}
