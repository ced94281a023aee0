package io.xferd.daemon.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package graph of {@code io.xferd.*}, computed from the main sources of every module (imports, static
 * imports and fully qualified names in code; comments do not count), must not get a new cycle.
 * <p>
 * The package moves of issue 11 made the graph acyclic (the layering: docs/architecture.md, "Package map"), so
 * {@link #KNOWN_CYCLE_EDGES} is empty: a dependency that closes a cycle fails this test. An entry of the list that
 * no longer lies on a cycle fails it too.
 */
class PackageCyclesTest
{
    private static final Path SOURCES_ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String PREFIX = "io.xferd.";
    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    /** A package name of ours followed by a type (capitalised) or a wildcard import. */
    private static final Pattern REFERENCE = Pattern.compile("\\bio\\.xferd((?:\\.[a-z_][a-z0-9_]*)+)\\.(?:[A-Z*])");

    /**
     * Dependencies allowed to lie on a cycle, "from -> to" without the {@code io.xferd.} prefix: none since the moves
     * of issue 11. Never add one.
     */
    private static final Set<String> KNOWN_CYCLE_EDGES = Set.of();

    @Test
    void shouldHaveNoDependencyCycleBetweenPackagesBeyondTheKnownOnes() throws IOException
    {
        final Map<String, Set<String>> graph = packageGraph();
        assertThat(graph).as("packages found under %s", SOURCES_ROOT).containsKeys("daemon", "client", "ipc");

        final Set<String> cycleEdges = edgesOnCycles(graph);
        final Set<String> added = new TreeSet<>(cycleEdges);
        added.removeAll(KNOWN_CYCLE_EDGES);
        final Set<String> gone = new TreeSet<>(KNOWN_CYCLE_EDGES);
        gone.removeAll(cycleEdges);

        assertThat(added).as("dependencies that close a new package cycle (every edge on a cycle now: %s)",
            format(cycleEdges)).isEmpty();
        assertThat(gone).as("known cycle dependencies that are no longer on a cycle: remove them from " +
            "KNOWN_CYCLE_EDGES").isEmpty();
    }

    @Test
    void shouldSeeADependencyWrittenAsAFullyQualifiedNameButNotOneInAComment()
    {
        final Map<String, Set<String>> graph = new TreeMap<>();
        addReferences(graph, """
            package io.xferd.daemon.peer;
            import io.xferd.ipc.TransferStatus;
            import static io.xferd.daemon.memory.RegionTable.EMPTY;
            import io.xferd.topology.*;
            // io.xferd.daemon.journal.TransferJournal is only mentioned here
            /** {@link io.xferd.daemon.metrics.MetricsEndpoint} neither */
            class A { io.xferd.daemon.session.ClientSession session; String s = "/* not a comment"; }
            """);

        assertThat(graph).containsEntry("daemon.peer", Set.of("ipc", "daemon.memory", "topology", "daemon.session"));
    }

    @Test
    void shouldFindTheEdgesOfEveryCycleAndNoOther()
    {
        final Map<String, Set<String>> graph = new TreeMap<>();
        graph.put("a", Set.of("b"));
        graph.put("b", Set.of("c", "d"));
        graph.put("c", Set.of("a"));
        graph.put("d", Set.of("e"));
        graph.put("e", Set.of());

        assertThat(edgesOnCycles(graph)).containsExactlyInAnyOrder("a -> b", "b -> c", "c -> a");
    }

    private static Map<String, Set<String>> packageGraph() throws IOException
    {
        final Map<String, Set<String>> graph = new TreeMap<>();
        final List<Path> sources;
        try (Stream<Path> paths = Files.walk(SOURCES_ROOT))
        {
            sources = paths
                .filter(path -> path.toString().endsWith(".java"))
                .filter(path -> path.toString().contains("/src/main/java/"))
                .filter(path -> !path.toString().contains("/target/"))
                .toList();
        }
        for (final Path source : sources)
        {
            addReferences(graph, Files.readString(source));
        }
        return graph;
    }

    private static void addReferences(final Map<String, Set<String>> graph, final String source)
    {
        final Matcher declared = PACKAGE.matcher(source);
        if (!declared.find() || !declared.group(1).startsWith(PREFIX))
        {
            return;
        }
        final String from = declared.group(1).substring(PREFIX.length());
        final Set<String> to = graph.computeIfAbsent(from, ignore -> new TreeSet<>());
        final Matcher reference = REFERENCE.matcher(withoutComments(source));
        while (reference.find())
        {
            final String target = reference.group(1).substring(1);
            if (!target.equals(from))
            {
                to.add(target);
                graph.computeIfAbsent(target, ignore -> new TreeSet<>());
            }
        }
    }

    /**
     * The source with its comments blanked out; string, character and text-block literals are kept as they are.
     */
    static String withoutComments(final String source)
    {
        final StringBuilder code = new StringBuilder(source.length());
        int i = 0;
        while (i < source.length())
        {
            final char c = source.charAt(i);
            if (source.startsWith("//", i))
            {
                while (i < source.length() && source.charAt(i) != '\n')
                {
                    i++;
                }
            }
            else if (source.startsWith("/*", i))
            {
                final int end = source.indexOf("*/", i + 2);
                i = end < 0 ? source.length() : end + 2;
                code.append(' ');
            }
            else if (source.startsWith("\"\"\"", i))
            {
                final int end = source.indexOf("\"\"\"", i + 3);
                final int stop = end < 0 ? source.length() : end + 3;
                code.append(source, i, stop);
                i = stop;
            }
            else if (c == '"' || c == '\'')
            {
                int j = i + 1;
                while (j < source.length() && source.charAt(j) != c && source.charAt(j) != '\n')
                {
                    j += source.charAt(j) == '\\' ? 2 : 1;
                }
                final int stop = Math.min(source.length(), j + 1);
                code.append(source, i, stop);
                i = stop;
            }
            else
            {
                code.append(c);
                i++;
            }
        }
        return code.toString();
    }

    /**
     * @return every edge "from -> to" whose two ends lie in one strongly connected component (Tarjan).
     */
    static Set<String> edgesOnCycles(final Map<String, Set<String>> graph)
    {
        final Map<String, Integer> component = new HashMap<>();
        new Tarjan(graph, component).run();
        final Set<String> edges = new TreeSet<>();
        graph.forEach((from, targets) -> targets.stream()
            .filter(to -> component.get(from).equals(component.get(to)))
            .forEach(to -> edges.add(from + " -> " + to)));
        return edges;
    }

    private static String format(final Set<String> edges)
    {
        return edges.stream().map(edge -> "\"" + edge + "\"").collect(Collectors.joining(",\n", "\n", "\n"));
    }

    private static final class Tarjan
    {
        private final Map<String, Set<String>> graph;
        private final Map<String, Integer> component;
        private final Map<String, Integer> index = new HashMap<>();
        private final Map<String, Integer> lowLink = new HashMap<>();
        private final Deque<String> stack = new ArrayDeque<>();
        private final Set<String> onStack = new TreeSet<>();
        private int next;
        private int components;

        Tarjan(final Map<String, Set<String>> graph, final Map<String, Integer> component)
        {
            this.graph = graph;
            this.component = component;
        }

        void run()
        {
            for (final String node : new ArrayList<>(graph.keySet()))
            {
                if (!index.containsKey(node))
                {
                    visit(node);
                }
            }
        }

        private void visit(final String node)
        {
            index.put(node, next);
            lowLink.put(node, next);
            next++;
            stack.push(node);
            onStack.add(node);
            for (final String target : graph.getOrDefault(node, Set.of()))
            {
                if (!index.containsKey(target))
                {
                    visit(target);
                    lowLink.put(node, Math.min(lowLink.get(node), lowLink.get(target)));
                }
                else if (onStack.contains(target))
                {
                    lowLink.put(node, Math.min(lowLink.get(node), index.get(target)));
                }
            }
            if (lowLink.get(node).equals(index.get(node)))
            {
                String member;
                do
                {
                    member = stack.pop();
                    onStack.remove(member);
                    component.put(member, components);
                }
                while (!member.equals(node));
                components++;
            }
        }
    }
}
