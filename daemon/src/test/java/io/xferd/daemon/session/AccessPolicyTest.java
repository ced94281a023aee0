package io.xferd.daemon.session;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class AccessPolicyTest
{
    private static final int OWNER = 1000;
    private static final int OTHER = 1001;
    private static final int OTHER_GROUP = 1001;

    @Test
    void shouldLetTheOwnersUidAndRootThroughByDefault()
    {
        assertThat(AccessPolicy.OWNER_ONLY.permits(OWNER, OTHER_GROUP, OWNER)).isTrue();
        assertThat(AccessPolicy.OWNER_ONLY.permits(AccessPolicy.ROOT_UID, 0, OWNER)).isTrue();
    }

    @Test
    void shouldRefuseAnotherUidByDefault()
    {
        assertThat(AccessPolicy.OWNER_ONLY.permits(OTHER, OTHER_GROUP, OWNER)).isFalse();
        assertThat(AccessPolicy.OWNER_ONLY.permits(OTHER, OWNER, OWNER)).as("a gid equal to the owner's uid").isFalse();
    }

    @Test
    void shouldLetAGrantedUidOrPrimaryGidThroughAndNoOneElse()
    {
        final AccessPolicy policy = new AccessPolicy(new int[]{2001}, new int[]{3000});

        assertThat(policy.permits(2001, 9999, OWNER)).isTrue();
        assertThat(policy.permits(2002, 3000, OWNER)).isTrue();
        assertThat(policy.permits(2002, 3001, OWNER)).isFalse();
        assertThat(policy.permits(3000, 2001, OWNER)).as("uid and gid lists are not interchangeable").isFalse();
    }

    @Test
    void shouldNotChangeWhenTheCallersArraysDo()
    {
        final int[] uids = {2001};
        final AccessPolicy policy = new AccessPolicy(uids, new int[0]);
        uids[0] = OTHER;

        assertThat(policy.permits(OTHER, OTHER_GROUP, OWNER)).isFalse();
    }
}
