package io.xferd.daemon.statusmap;

import net.openhft.chronicle.values.ValueModel;

import javax.tools.ToolProvider;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Build step (run by Maven at process-classes): compiles the {@code $$Native} classes that Chronicle Values would
 * otherwise generate and compile with javac at run time, into the daemon's classes. Chronicle Values loads a class
 * of that name from the value interface's class loader before it generates one, so opening a Chronicle Map (the
 * registry: the daemon at start, {@code xferd status} at every call) no longer loads javac's ~1,200 classes nor
 * compiles anything: several seconds of CPU at each start. The source is Chronicle's own, generated from the
 * dependency on the class path of this very build, so it cannot drift from the version that runs.
 */
public final class ChronicleValueClasses
{
    /** The value interfaces whose native implementations Chronicle Map asks for when it opens a map. */
    static final List<String> VALUE_INTERFACES = List.of("net.openhft.chronicle.hash.VanillaGlobalMutableState");

    private ChronicleValueClasses()
    {
    }

    /**
     * @param args the classes directory to compile into.
     */
    public static void main(final String[] args) throws Exception
    {
        final Path classes = Path.of(args[0]);
        final Path sources = Files.createTempDirectory("xferd-chronicle-values");
        try
        {
            final Method generate = Class.forName("net.openhft.chronicle.values.Generators")
                .getDeclaredMethod("generateNativeClass", ValueModel.class, String.class);
            generate.setAccessible(true); // package-private in Chronicle Values: the generator it runs itself
            final Method nativeSimpleName = ValueModel.class.getDeclaredMethod("simpleName", Class.class);
            nativeSimpleName.setAccessible(true); // the name it looks up: same helper, so the same name
            final List<String> command = new java.util.ArrayList<>(List.of("-d", classes.toString(), "-proc:none",
                "-nowarn", "-Xlint:none", "-cp", System.getProperty("java.class.path")));
            for (final String name : VALUE_INTERFACES)
            {
                final Class<?> valueInterface = Class.forName(name);
                final String simpleName = nativeSimpleName.invoke(null, valueInterface) + ValueModel.$$NATIVE;
                final String source = (String)generate.invoke(null, ValueModel.acquire(valueInterface), simpleName);
                final Path file = sources.resolve(simpleName + ".java");
                Files.writeString(file, source);
                command.add(file.toString());
            }
            final int status = ToolProvider.getSystemJavaCompiler().run(null, null, null, command.toArray(String[]::new));
            if (status != 0)
            {
                throw new IllegalStateException("javac failed (" + status + ") on Chronicle Values' generated sources");
            }
        }
        finally
        {
            deleteTree(sources);
        }
    }

    private static void deleteTree(final Path root) throws IOException
    {
        try (var paths = Files.walk(root))
        {
            for (final Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList())
            {
                Files.delete(path);
            }
        }
    }
}
