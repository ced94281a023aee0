package io.xferd.daemon.transport.rdma;

/**
 * Names of {@code enum ibv_wc_status}, so that a failed completion is reported by name without calling into
 * libibverbs (and without allocating: the names are constants).
 */
public final class WorkCompletionStatus
{
    public static final int SUCCESS = 0;
    public static final int LOC_PROT_ERR = 4;
    public static final int WR_FLUSH_ERR = 5;
    public static final int REM_ACCESS_ERR = 10;
    public static final int RETRY_EXC_ERR = 12;

    private static final String[] NAMES = {
        "IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR", "IBV_WC_LOC_EEC_OP_ERR",
        "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR", "IBV_WC_BAD_RESP_ERR",
        "IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
        "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR",
        "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
        "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR", "IBV_WC_TM_ERR", "IBV_WC_TM_RNDV_INCOMPLETE"};

    private WorkCompletionStatus()
    {
    }

    public static String name(final int status)
    {
        return status >= 0 && status < NAMES.length ? NAMES[status] : "IBV_WC_UNKNOWN_STATUS";
    }
}
