package io.xferd.proxy;

import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BackendPoolTest
{
    private static final long MIN_EJECT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final CachedNanoClock clock = new CachedNanoClock();
    private final BackendPool pool = new BackendPool(BackendRole.DECODE);

    private Backend add(final String url)
    {
        return pool.add(new Backend(BackendAddress.parse(url), BackendRole.DECODE, BackendSource.COMMAND_LINE, 2,
            MIN_EJECT_NANOS));
    }

    @Test
    void shouldChooseTheBackendWithFewestOutstandingRequests()
    {
        final Backend a = add("http://10.0.0.1:8020");
        final Backend b = add("http://10.0.0.2:8020");
        final Backend c = add("http://10.0.0.3:8020");
        a.acquire(10);
        a.acquire(10);
        b.acquire(10);
        for (int i = 0; i < 10; i++)
        {
            assertThat(pool.select()).isSameAs(c);
        }
        c.acquire(10);
        c.acquire(10);
        assertThat(pool.select()).isSameAs(b);
    }

    @Test
    void shouldBreakRequestTiesByOutstandingTokens()
    {
        final Backend a = add("http://10.0.0.1:8020");
        final Backend b = add("http://10.0.0.2:8020");
        a.acquire(8_000);
        b.acquire(100);
        for (int i = 0; i < 10; i++)
        {
            assertThat(pool.select()).isSameAs(b);
        }
    }

    @Test
    void shouldShareWorkAmongEquallyLoadedBackendsInsteadOfAlwaysTheFirst()
    {
        final Backend a = add("http://10.0.0.1:8020");
        final Backend b = add("http://10.0.0.2:8020");
        final Backend c = add("http://10.0.0.3:8020");
        final Map<Backend, Integer> chosen = new HashMap<>();
        for (int i = 0; i < 30; i++)
        {
            chosen.merge(pool.select(), 1, Integer::sum);
        }
        assertThat(chosen).containsEntry(a, 10).containsEntry(b, 10).containsEntry(c, 10);
    }

    @Test
    void shouldAssignConcurrentRequestsEvenlyWhenEachHoldsItsBackend()
    {
        final Backend[] backends = {add("http://10.0.0.1:8020"), add("http://10.0.0.2:8020")};
        for (int i = 0; i < 10; i++)
        {
            pool.select().acquire(50);
        }
        assertThat(backends[0].outstandingRequests()).isEqualTo(5);
        assertThat(backends[1].outstandingRequests()).isEqualTo(5);
        backends[0].release(50);
        backends[0].release(50);
        assertThat(pool.select()).isSameAs(backends[0]);
    }

    @Test
    void shouldSkipEjectedBackendsAndAnswerNullWhenNoneIsHealthy()
    {
        final Backend a = add("http://10.0.0.1:8020");
        final Backend b = add("http://10.0.0.2:8020");
        b.acquire(1);
        assertThat(a.onUnreachable("connection refused", clock.nanoTime())).isTrue();
        assertThat(pool.select()).isSameAs(b);
        b.onUnreachable("connection reset", clock.nanoTime());
        assertThat(pool.select()).isNull();
        assertThat(pool.healthyCount()).isZero();
    }

    @Test
    void shouldEjectAfterConsecutiveFailedProbesOnly()
    {
        final Backend a = add("http://10.0.0.1:8020");
        assertThat(a.onProbe(false, "503", clock.nanoTime())).isFalse();
        assertThat(a.onProbe(true, "", clock.nanoTime())).isFalse();
        assertThat(a.onProbe(false, "503", clock.nanoTime())).isFalse();
        assertThat(a.isHealthy()).isTrue();
        assertThat(a.onProbe(false, "503", clock.nanoTime())).isTrue();
        assertThat(a.isHealthy()).isFalse();
        assertThat(a.lastFailure()).isEqualTo("503");
    }

    @Test
    void shouldRestoreAnEjectedBackendOnAPassingProbeOnlyAfterTheMinimumTimeOut()
    {
        final Backend a = add("http://10.0.0.1:8020");
        clock.update(1_000);
        a.onUnreachable("connection refused", clock.nanoTime());
        clock.advance(MIN_EJECT_NANOS - 1);
        assertThat(a.onProbe(true, "", clock.nanoTime())).isFalse();
        assertThat(a.isHealthy()).isFalse();
        clock.advance(1);
        assertThat(a.onProbe(true, "", clock.nanoTime())).isTrue();
        assertThat(a.isHealthy()).isTrue();
        assertThat(pool.select()).isSameAs(a);
    }

    @Test
    void shouldRestartTheTimeOutOnEveryFailureWhileEjected()
    {
        final Backend a = add("http://10.0.0.1:8020");
        a.onUnreachable("refused", clock.nanoTime());
        clock.advance(MIN_EJECT_NANOS);
        a.onProbe(false, "refused", clock.nanoTime());
        clock.advance(MIN_EJECT_NANOS - 1);
        assertThat(a.onProbe(true, "", clock.nanoTime())).isFalse();
        clock.advance(1);
        assertThat(a.onProbe(true, "", clock.nanoTime())).isTrue();
    }

    @Test
    void shouldAddEachUrlOnceAndRemoveWithoutDisturbingTheOthers()
    {
        final Backend a = add("http://10.0.0.1:8020");
        assertThat(add("http://10.0.0.1:8020/")).isSameAs(a);
        final Backend b = add("10.0.0.2:8020");
        assertThat(pool.members()).containsExactly(a, b);
        assertThat(pool.remove("http://10.0.0.1:8020")).isSameAs(a);
        assertThat(pool.remove("http://10.0.0.1:8020")).isNull();
        assertThat(pool.members()).containsExactly(b);
        assertThat(pool.select()).isSameAs(b);
    }

    @Test
    void shouldRefuseABackendOfTheOtherRoleAndUnusableUrls()
    {
        assertThatThrownBy(() -> pool.add(new Backend(BackendAddress.parse("http://h:1"), BackendRole.PREFILL,
            BackendSource.ADMIN, 1, 0))).isInstanceOf(IllegalArgumentException.class);
        for (final String bad : new String[]{"https://h:1", "http://h", "http://h:0", "http://h:70000", "ftp://h:1",
            "http://u@h:1", "http://h:1/?q=1", "::::"})
        {
            assertThatThrownBy(() -> BackendAddress.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(BackendAddress.parse("http://[::1]:8000/base/").url()).isEqualTo("http://[::1]:8000/base");
        assertThat(BackendAddress.parse("http://[::1]:8000/base/").host()).isEqualTo("::1");
    }
}
