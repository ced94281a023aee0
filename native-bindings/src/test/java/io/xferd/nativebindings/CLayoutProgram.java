package io.xferd.nativebindings;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * Builds a C program that prints the size, alignment and member offsets/sizes of C types and the values of
 * constants, as {@code key=value} lines, from FFM layouts whose names are the C names; compiles it with gcc against
 * the installed headers and returns what it printed, to compare with {@link #expected()}.
 */
public final class CLayoutProgram
{
    private final List<String> includes;
    private final List<String> statements = new ArrayList<>();
    private final Map<String, Long> expected = new LinkedHashMap<>();

    public CLayoutProgram(final String... includes)
    {
        this.includes = List.of(includes);
    }

    /**
     * @return true when gcc can compile a file that includes {@code header} with {@code flags}.
     */
    public static boolean headerCompiles(final Path dir, final String header, final String... flags)
        throws IOException, InterruptedException
    {
        final Path source = dir.resolve("probe-" + Math.abs(header.hashCode()) + ".c");
        Files.writeString(source, "#include <" + header + ">\nint main(void) { return 0; }\n");
        final List<String> command = new ArrayList<>(List.of("gcc", "-fsyntax-only"));
        command.addAll(List.of(flags));
        command.add(source.toString());
        try
        {
            final Process gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
            gcc.getInputStream().readAllBytes();
            return gcc.waitFor(60, TimeUnit.SECONDS) && gcc.exitValue() == 0;
        }
        catch (final IOException noGcc)
        {
            return false;
        }
    }

    /**
     * Adds checks for {@code sizeof}, {@code _Alignof} and every named member (recursively, padding skipped).
     *
     * @param cType e.g. {@code "struct ibv_send_wr"}; the layout's members are named as the C members.
     */
    public CLayoutProgram type(final String cType, final GroupLayout layout)
    {
        check("sizeof(" + cType + ")", "sizeof(" + cType + ")", layout.byteSize());
        check("_Alignof(" + cType + ")", "_Alignof(" + cType + ")", layout.byteAlignment());
        members(cType, layout, layout, "", new ArrayList<>());
        return this;
    }

    private void members(
        final String cType, final GroupLayout root, final GroupLayout group, final String prefix,
        final List<MemoryLayout.PathElement> path)
    {
        for (final MemoryLayout member : group.memberLayouts())
        {
            if (member instanceof PaddingLayout || member.name().isEmpty())
            {
                continue;
            }
            final String cPath = prefix + member.name().get();
            final List<MemoryLayout.PathElement> memberPath = new ArrayList<>(path);
            memberPath.add(groupElement(member.name().get()));
            final MemoryLayout.PathElement[] elements = memberPath.toArray(MemoryLayout.PathElement[]::new);
            check("offsetof(" + cType + ", " + cPath + ")", "offsetof(" + cType + ", " + cPath + ")",
                root.byteOffset(elements));
            check("sizeof(" + cType + "." + cPath + ")", "sizeof(((" + cType + " *)0)->" + cPath + ")",
                member.byteSize());
            if (member instanceof GroupLayout nested)
            {
                members(cType, root, nested, cPath + ".", memberPath);
            }
        }
    }

    /**
     * Adds a check that the C expression {@code cExpression} (a constant, or an offsetof) has the value {@code value}.
     */
    public CLayoutProgram constant(final String cExpression, final long value)
    {
        return check(cExpression, cExpression, value);
    }

    /**
     * As {@link #constant(String, long)}, reported under {@code key}.
     */
    public CLayoutProgram constant(final String key, final String cExpression, final long value)
    {
        return check(key, cExpression, value);
    }

    private CLayoutProgram check(final String key, final String cExpression, final long value)
    {
        if (expected.putIfAbsent(key, value) != null)
        {
            throw new IllegalArgumentException("duplicate check " + key);
        }
        statements.add("    printf(\"%s=%lld\\n\", \"" + key + "\", (long long)(" + cExpression + "));");
        return this;
    }

    /**
     * @return each check whose printed value differs from the expected one (or is missing), as
     * {@code "key: java=X c=Y"}; empty when all match.
     */
    public List<String> mismatches(final Map<String, Long> actual)
    {
        final List<String> mismatches = new ArrayList<>();
        expected.forEach((key, value) ->
        {
            if (!value.equals(actual.get(key)))
            {
                mismatches.add(key + ": java=" + value + " c=" + actual.get(key));
            }
        });
        return mismatches;
    }

    public Map<String, Long> expected()
    {
        return expected;
    }

    public String source()
    {
        final StringBuilder sb = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n");
        includes.forEach(header -> sb.append("#include <").append(header).append(">\n"));
        sb.append("int main(void)\n{\n");
        statements.forEach(line -> sb.append(line).append('\n'));
        return sb.append("    return 0;\n}\n").toString();
    }

    /**
     * Writes, compiles (gcc, with {@code flags}) and runs the program in {@code dir}.
     *
     * @return what it printed, key to value.
     */
    public Map<String, Long> compileAndRun(final Path dir, final String... flags) throws IOException, InterruptedException
    {
        final Path source = dir.resolve("layout.c");
        final Path binary = dir.resolve("layout");
        Files.writeString(source, source());
        final List<String> command = new ArrayList<>(List.of("gcc", "-std=gnu11", "-Wall", "-o", binary.toString(),
            source.toString()));
        command.addAll(List.of(flags));
        final String compileOutput = run(command);
        if (!Files.exists(binary))
        {
            throw new IllegalStateException("gcc failed:\n" + compileOutput + "\n" + source());
        }
        final Map<String, Long> actual = new LinkedHashMap<>();
        for (final String line : run(List.of(binary.toString())).split("\n"))
        {
            final int eq = line.lastIndexOf('=');
            if (eq > 0)
            {
                actual.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1).strip()));
            }
        }
        return actual;
    }

    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException("timed out: " + command);
        }
        return output;
    }
}
