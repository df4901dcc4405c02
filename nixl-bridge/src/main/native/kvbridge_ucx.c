/*
 * kvbridge UCX backend. libucp.so.0 is opened with dlopen after UCX_ERROR_SIGNALS is set to "" (unless the user set
 * it): a libucs that installs its SIGSEGV handler kills the JVM on its first implicit null check. Every ucp_*
 * function is called through a pointer found with dlsym; the UCX headers only give the types and macros.
 *
 * A read is N ucp_get_nbx straight into the local pool at the caller's offsets, then ucp_ep_flush_nbx; once every
 * request completed, the notification (if any) goes out as active message KVB_AM_NOTIF, and the transfer is done
 * when that send completed. Received notifications are copied into the context's queue.
 */
#define _GNU_SOURCE
#include "kvbridge_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ucp/api/ucp.h>

#define KVB_AM_NOTIF 0x4b56
#define KVB_CLOSE_WAIT_NS 1000000000LL

static struct
{
    void *handle;
    char version[64];
    ucs_status_t (*init_version)(unsigned, unsigned, const ucp_params_t *, const ucp_config_t *, ucp_context_h *);
    void (*cleanup)(ucp_context_h);
    void (*get_version)(unsigned *, unsigned *, unsigned *);
    ucs_status_t (*worker_create)(ucp_context_h, const ucp_worker_params_t *, ucp_worker_h *);
    void (*worker_destroy)(ucp_worker_h);
    ucs_status_t (*worker_get_address)(ucp_worker_h, ucp_address_t **, size_t *);
    void (*worker_release_address)(ucp_worker_h, ucp_address_t *);
    unsigned (*worker_progress)(ucp_worker_h);
    ucs_status_t (*worker_set_am_recv_handler)(ucp_worker_h, const ucp_am_handler_param_t *);
    ucs_status_t (*mem_map)(ucp_context_h, const ucp_mem_map_params_t *, ucp_mem_h *);
    ucs_status_t (*mem_unmap)(ucp_context_h, ucp_mem_h);
    ucs_status_t (*mem_query)(const ucp_mem_h, ucp_mem_attr_t *);
    ucs_status_t (*rkey_pack)(ucp_context_h, ucp_mem_h, void **, size_t *);
    void (*rkey_buffer_release)(void *);
    ucs_status_t (*ep_create)(ucp_worker_h, const ucp_ep_params_t *, ucp_ep_h *);
    ucs_status_ptr_t (*ep_close_nbx)(ucp_ep_h, const ucp_request_param_t *);
    ucs_status_t (*ep_rkey_unpack)(ucp_ep_h, const void *, ucp_rkey_h *);
    void (*rkey_destroy)(ucp_rkey_h);
    ucs_status_t (*rkey_ptr)(ucp_rkey_h, uint64_t, void **);
    ucs_status_ptr_t (*get_nbx)(ucp_ep_h, void *, size_t, uint64_t, ucp_rkey_h, const ucp_request_param_t *);
    ucs_status_ptr_t (*ep_flush_nbx)(ucp_ep_h, const ucp_request_param_t *);
    ucs_status_ptr_t (*am_send_nbx)(ucp_ep_h, unsigned, const void *, size_t, const void *, size_t,
                                    const ucp_request_param_t *);
    ucs_status_t (*request_check_status)(void *);
    void (*request_free)(void *);
    const char *(*status_string)(ucs_status_t);
} ucp;

typedef struct kvb_ucx_peer
{
    int used;
    ucp_ep_h ep;
    ucp_rkey_h rkey;
    uint64_t base;
    uint64_t len;
    ucs_status_t failed;
    int err_peer;
    uint64_t gen;
    char agent[KVB_NAME_MAX];
} kvb_ucx_peer;

typedef struct kvb_ucx_xfer
{
    struct kvb_ucx_xfer *prev;
    struct kvb_ucx_xfer *next;
    int peer;
    uint64_t peer_gen;
    int pending;
    int released;
    int notif_posted;
    ucs_status_t status;
    size_t notif_len;
    char *notif;
    char err[256];
} kvb_ucx_xfer;

struct kvb_ucx
{
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *waddr;
    size_t waddr_len;
    ucp_mem_h memh;
    void *rkey_buf;
    size_t rkey_len;
    kvb_ucx_xfer *xfers;
    uint64_t peer_gen;
    kvb_ucx_peer peers[KVB_MAX_PEERS];
};

static int load_sym(void **slot, const char *name, char *err, size_t errlen)
{
    *slot = dlsym(ucp.handle, name);
    if (*slot == NULL)
    {
        kvb_errf(err, errlen, "dlsym(%s) failed: %s", name, dlerror());
        return KVB_ERR;
    }
    return KVB_OK;
}

#define LOAD(field, name) \
    if (load_sym((void **)&ucp.field, name, err, errlen) != KVB_OK) \
    { \
        return KVB_ERR; \
    }

int kvb_ucx_load(const char *libucp, char *err, size_t errlen)
{
    if (ucp.handle != NULL)
    {
        return KVB_OK;
    }
    /* Never override what the user set; these must be in the environment before libucs's constructor runs. */
    setenv("UCX_ERROR_SIGNALS", "", 0);
    setenv("UCX_MEM_EVENTS", "no", 0);
    setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
    void *handle = dlopen(libucp, RTLD_NOW | RTLD_GLOBAL);
    if (handle == NULL)
    {
        kvb_errf(err, errlen, "dlopen(%s) failed: %s", libucp, dlerror());
        return KVB_ERR;
    }
    ucp.handle = handle;
    LOAD(init_version, "ucp_init_version");
    LOAD(cleanup, "ucp_cleanup");
    LOAD(get_version, "ucp_get_version");
    LOAD(worker_create, "ucp_worker_create");
    LOAD(worker_destroy, "ucp_worker_destroy");
    LOAD(worker_get_address, "ucp_worker_get_address");
    LOAD(worker_release_address, "ucp_worker_release_address");
    LOAD(worker_progress, "ucp_worker_progress");
    LOAD(worker_set_am_recv_handler, "ucp_worker_set_am_recv_handler");
    LOAD(mem_map, "ucp_mem_map");
    LOAD(mem_unmap, "ucp_mem_unmap");
    LOAD(mem_query, "ucp_mem_query");
    LOAD(rkey_pack, "ucp_rkey_pack");
    LOAD(rkey_buffer_release, "ucp_rkey_buffer_release");
    LOAD(ep_create, "ucp_ep_create");
    LOAD(ep_close_nbx, "ucp_ep_close_nbx");
    LOAD(ep_rkey_unpack, "ucp_ep_rkey_unpack");
    LOAD(rkey_destroy, "ucp_rkey_destroy");
    LOAD(rkey_ptr, "ucp_rkey_ptr");
    LOAD(get_nbx, "ucp_get_nbx");
    LOAD(ep_flush_nbx, "ucp_ep_flush_nbx");
    LOAD(am_send_nbx, "ucp_am_send_nbx");
    LOAD(request_check_status, "ucp_request_check_status");
    LOAD(request_free, "ucp_request_free");
    LOAD(status_string, "ucs_status_string");
    unsigned major = 0;
    unsigned minor = 0;
    unsigned release = 0;
    ucp.get_version(&major, &minor, &release);
    snprintf(ucp.version, sizeof(ucp.version), "kvb %d / ucp %u.%u.%u", KVB_ABI_VERSION, major, minor, release);
    return KVB_OK;
}

const char *kvb_ucx_version(void)
{
    return ucp.handle == NULL ? "kvb 1 / ucp not loaded" : ucp.version;
}

static const char *status_text(ucs_status_t status)
{
    return ucp.status_string(status);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static ucs_status_t on_notif(void *arg, const void *header, size_t header_length, void *data, size_t length,
                             const ucp_am_recv_param_t *param)
{
    (void)header;
    (void)header_length;
    kvb_ctx *ctx = arg;
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0)
    {
        fprintf(stderr, "kvbridge %s: dropped a rendezvous notification of %zu bytes\n", ctx->name, length);
        return UCS_OK;
    }
    kvb_notif_push(ctx, data, length);
    return UCS_OK;
}

int kvb_ucx_open(kvb_ctx *ctx, char *err, size_t errlen)
{
    if (ucp.handle == NULL)
    {
        kvb_errf(err, errlen, "libucp is not loaded (kvb_load)");
        return KVB_ERR;
    }
    struct kvb_ucx *u = calloc(1, sizeof(struct kvb_ucx));
    if (u == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return KVB_ERR;
    }
    ucp_params_t params;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    params.name = ctx->name;
    ucs_status_t status = ucp.init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, NULL, &u->context);
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "ucp_init failed: %s", status_text(status));
        free(u);
        return KVB_ERR;
    }
    ucp_worker_params_t wparams;
    memset(&wparams, 0, sizeof(wparams));
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    status = ucp.worker_create(u->context, &wparams, &u->worker);
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "ucp_worker_create failed: %s", status_text(status));
        ucp.cleanup(u->context);
        free(u);
        return KVB_ERR;
    }
    ucp_am_handler_param_t am;
    memset(&am, 0, sizeof(am));
    am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
    am.id = KVB_AM_NOTIF;
    am.cb = on_notif;
    am.arg = ctx;
    status = ucp.worker_set_am_recv_handler(u->worker, &am);
    if (status == UCS_OK)
    {
        status = ucp.worker_get_address(u->worker, &u->waddr, &u->waddr_len);
    }
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "ucp worker setup failed: %s", status_text(status));
        ucp.worker_destroy(u->worker);
        ucp.cleanup(u->context);
        free(u);
        return KVB_ERR;
    }
    ctx->ucx = u;
    return KVB_OK;
}

int kvb_ucx_pool_alloc(kvb_ctx *ctx, uint64_t bytes, char *err, size_t errlen)
{
    struct kvb_ucx *u = ctx->ucx;
    ucp_mem_map_params_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address = NULL;
    mp.length = bytes;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    ucs_status_t status = ucp.mem_map(u->context, &mp, &u->memh);
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "ucp_mem_map(ALLOCATE, %llu bytes) failed: %s", (unsigned long long)bytes,
                 status_text(status));
        return KVB_ERR;
    }
    ucp_mem_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    status = ucp.mem_query(u->memh, &attr);
    if (status == UCS_OK && attr.length < bytes)
    {
        status = UCS_ERR_NO_MEMORY;
    }
    if (status == UCS_OK)
    {
        status = ucp.rkey_pack(u->context, u->memh, &u->rkey_buf, &u->rkey_len);
    }
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "ucp pool setup failed: %s", status_text(status));
        ucp.mem_unmap(u->context, u->memh);
        u->memh = NULL;
        return KVB_ERR;
    }
    kvb_pretouch(attr.address, bytes);
    ctx->pool = attr.address;
    ctx->pool_len = bytes;
    return KVB_OK;
}

int kvb_ucx_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len)
{
    struct kvb_ucx *u = ctx->ucx;
    return kvb_md_write(buf, cap, len, ctx->name, u->waddr, u->waddr_len, u->rkey_buf, u->rkey_len,
                        (uint64_t)(uintptr_t)ctx->pool, ctx->pool_len);
}

static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    kvb_ucx_peer *peer = arg;
    if (peer->failed == UCS_OK)
    {
        peer->failed = status;
    }
}

/* Closes an endpoint, progressing the worker until done or KVB_CLOSE_WAIT_NS passed. */
static void close_ep(struct kvb_ucx *u, ucp_ep_h ep, int force)
{
    ucp_request_param_t param;
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t req = ucp.ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(req))
    {
        long long deadline = now_ns() + KVB_CLOSE_WAIT_NS;
        while (ucp.request_check_status(req) == UCS_INPROGRESS && now_ns() < deadline)
        {
            ucp.worker_progress(u->worker);
        }
        ucp.request_free(req);
    }
}

/* Creates the peer's endpoint with the given error handling and unpacks its rkey. */
static ucs_status_t connect_peer(struct kvb_ucx *u, kvb_ucx_peer *p, const kvb_md_view *view, int err_peer,
                                 const char **what)
{
    ucp_ep_params_t ep;
    memset(&ep, 0, sizeof(ep));
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.address = view->waddr;
    ep.err_mode = err_peer ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    if (err_peer)
    {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_handler.cb = on_peer_error;
        ep.err_handler.arg = p;
    }
    p->err_peer = err_peer;
    *what = "ucp_ep_create";
    ucs_status_t status = ucp.ep_create(u->worker, &ep, &p->ep);
    if (status != UCS_OK)
    {
        p->ep = NULL;
        return status;
    }
    *what = "ucp_ep_rkey_unpack";
    status = ucp.ep_rkey_unpack(p->ep, view->rkey, &p->rkey);
    if (status != UCS_OK)
    {
        close_ep(u, p->ep, err_peer);
        p->ep = NULL;
        p->rkey = NULL;
    }
    return status;
}

/*
 * Error handling, unless the flags force one: a peer whose pool this process can map directly (ucp_rkey_ptr: same
 * host, shared memory) is read with plain memory copies that a dead peer cannot hang, so its endpoint goes without
 * peer failure detection, which in UCX 1.13 would exclude shared memory and route reads over TCP. Any other peer gets
 * UCP_ERR_HANDLING_MODE_PEER, or none when no shared transport supports it.
 */
int kvb_ucx_load_remote_md(kvb_ctx *ctx, const kvb_md_view *view, int *peer, char *err, size_t errlen)
{
    struct kvb_ucx *u = ctx->ucx;
    int slot = -1;
    for (int i = 0; i < KVB_MAX_PEERS && slot < 0; i++)
    {
        slot = u->peers[i].used ? -1 : i;
    }
    if (slot < 0)
    {
        kvb_errf(err, errlen, "%s already has %d peers", ctx->name, KVB_MAX_PEERS);
        return KVB_ERR;
    }
    if (view->agent_len >= KVB_NAME_MAX || view->waddr_len == 0 || view->rkey_len == 0)
    {
        kvb_errf(err, errlen, "remote KVB1 metadata has no UCX worker address or rkey");
        return KVB_ERR;
    }
    kvb_ucx_peer *p = &u->peers[slot];
    memset(p, 0, sizeof(*p));
    memcpy(p->agent, view->agent, view->agent_len);
    const char *what = "";
    ucs_status_t status = UCS_ERR_UNREACHABLE;
    if ((ctx->flags & (KVB_EP_ERR_PEER | KVB_EP_ERR_NONE)) != KVB_EP_ERR_PEER)
    {
        status = connect_peer(u, p, view, 0, &what);
        void *mapped = NULL;
        if (status == UCS_OK && (ctx->flags & KVB_EP_ERR_NONE) == 0 &&
            ucp.rkey_ptr(p->rkey, view->base, &mapped) != UCS_OK)
        {
            ucp.rkey_destroy(p->rkey);
            close_ep(u, p->ep, 0);
            status = UCS_ERR_UNREACHABLE;
        }
    }
    if (status == UCS_ERR_UNREACHABLE && (ctx->flags & KVB_EP_ERR_NONE) == 0)
    {
        status = connect_peer(u, p, view, 1, &what);
        if (status == UCS_ERR_UNREACHABLE && (ctx->flags & KVB_EP_ERR_PEER) == 0)
        {
            status = connect_peer(u, p, view, 0, &what);
        }
    }
    if (status != UCS_OK)
    {
        kvb_errf(err, errlen, "%s to %s failed: %s", what, p->agent, status_text(status));
        return KVB_ERR;
    }
    p->base = view->base;
    p->len = view->len;
    p->gen = ++u->peer_gen;
    p->used = 1;
    *peer = slot;
    return KVB_OK;
}

int kvb_ucx_invalidate_remote(kvb_ctx *ctx, int peer)
{
    struct kvb_ucx *u = ctx->ucx;
    kvb_ucx_peer *p = &u->peers[peer];
    if (!p->used)
    {
        return KVB_ERR;
    }
    ucp.rkey_destroy(p->rkey);
    close_ep(u, p->ep, p->err_peer && p->failed != UCS_OK);
    p->used = 0;
    return KVB_OK;
}

int kvb_ucx_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen)
{
    kvb_ucx_peer *p = &ctx->ucx->peers[peer];
    if (!p->used)
    {
        kvb_errf(err, errlen, "no peer %d", peer);
        return KVB_ERR;
    }
    if (p->failed != UCS_OK)
    {
        kvb_errf(err, errlen, "peer %s failed: %s", p->agent, status_text(p->failed));
        return KVB_ERR;
    }
    return KVB_OK;
}

static void on_request_done(void *request, ucs_status_t status, void *user_data)
{
    kvb_ucx_xfer *x = user_data;
    if (status != UCS_OK && x->status == UCS_OK)
    {
        x->status = status;
        snprintf(x->err, sizeof(x->err), "%s", status_text(status));
    }
    x->pending--;
    ucp.request_free(request);
    if (x->released && x->pending == 0)
    {
        free(x->notif);
        free(x);
    }
}

/* Accounts for the outcome of a *_nbx call: done now, pending (callback later), or failed. */
static void track(kvb_ucx_xfer *x, ucs_status_ptr_t req, const char *what)
{
    if (UCS_PTR_IS_PTR(req))
    {
        x->pending++;
    }
    else if (UCS_PTR_IS_ERR(req) && x->status == UCS_OK)
    {
        x->status = UCS_PTR_STATUS(req);
        snprintf(x->err, sizeof(x->err), "%s failed: %s", what, status_text(x->status));
    }
}

static kvb_ucx_xfer *new_xfer(struct kvb_ucx *u, int peer, const void *notif, size_t notif_len)
{
    kvb_ucx_xfer *x = calloc(1, sizeof(kvb_ucx_xfer));
    if (x == NULL)
    {
        return NULL;
    }
    x->peer = peer;
    x->peer_gen = u->peers[peer].gen;
    if (notif_len > 0)
    {
        x->notif = malloc(notif_len);
        if (x->notif == NULL)
        {
            free(x);
            return NULL;
        }
        memcpy(x->notif, notif, notif_len);
        x->notif_len = notif_len;
    }
    x->next = u->xfers;
    if (u->xfers != NULL)
    {
        u->xfers->prev = x;
    }
    u->xfers = x;
    return x;
}

static void request_param(ucp_request_param_t *param, kvb_ucx_xfer *x)
{
    memset(param, 0, sizeof(*param));
    param->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param->cb.send = on_request_done;
    param->user_data = x;
}

static void post_notif(struct kvb_ucx *u, kvb_ucx_xfer *x)
{
    ucp_request_param_t param;
    request_param(&param, x);
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    x->notif_posted = 1;
    track(x, ucp.am_send_nbx(u->peers[x->peer].ep, KVB_AM_NOTIF, NULL, 0, x->notif, x->notif_len, &param),
          "ucp_am_send_nbx");
}

static int usable_peer(kvb_ctx *ctx, int peer, char *err, size_t errlen)
{
    return kvb_ucx_peer_status(ctx, peer, err, errlen);
}

int kvb_ucx_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                      uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen)
{
    struct kvb_ucx *u = ctx->ucx;
    if (usable_peer(ctx, peer, err, errlen) != KVB_OK)
    {
        return KVB_ERR;
    }
    kvb_ucx_peer *p = &u->peers[peer];
    for (uint32_t i = 0; i < n; i++)
    {
        if (remote_off[i] > p->len || p->len - remote_off[i] < len)
        {
            kvb_errf(err, errlen, "remote range [%llu, +%llu) is outside the %llu-byte pool of %s",
                     (unsigned long long)remote_off[i], (unsigned long long)len, (unsigned long long)p->len,
                     p->agent);
            return KVB_ERR;
        }
    }
    kvb_ucx_xfer *x = new_xfer(u, peer, notif, notif_len);
    if (x == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return KVB_ERR;
    }
    ucp_request_param_t param;
    request_param(&param, x);
    char *pool = ctx->pool;
    for (uint32_t i = 0; i < n && x->status == UCS_OK; i++)
    {
        track(x, ucp.get_nbx(p->ep, pool + local_off[i], len, p->base + remote_off[i], p->rkey, &param),
              "ucp_get_nbx");
    }
    if (x->status == UCS_OK)
    {
        track(x, ucp.ep_flush_nbx(p->ep, &param), "ucp_ep_flush_nbx");
    }
    *xfer = (uint64_t)(uintptr_t)x;
    return KVB_OK;
}

int kvb_ucx_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err,
                       size_t errlen)
{
    struct kvb_ucx *u = ctx->ucx;
    if (usable_peer(ctx, peer, err, errlen) != KVB_OK)
    {
        return KVB_ERR;
    }
    if (len == 0)
    {
        kvb_errf(err, errlen, "an empty notification");
        return KVB_ERR;
    }
    kvb_ucx_xfer *x = new_xfer(u, peer, msg, len);
    if (x == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return KVB_ERR;
    }
    post_notif(u, x);
    *xfer = (uint64_t)(uintptr_t)x;
    return KVB_OK;
}

int kvb_ucx_xfer_status(kvb_ctx *ctx, uint64_t xfer)
{
    kvb_ucx_xfer *x = (kvb_ucx_xfer *)(uintptr_t)xfer;
    if (x->status != UCS_OK)
    {
        return KVB_ERR;
    }
    if (x->pending > 0)
    {
        return KVB_IN_PROGRESS;
    }
    if (x->notif_len > 0 && !x->notif_posted)
    {
        kvb_ucx_peer *p = &ctx->ucx->peers[x->peer];
        if (!p->used || p->gen != x->peer_gen || p->failed != UCS_OK)
        {
            x->status = UCS_ERR_CANCELED;
            snprintf(x->err, sizeof(x->err), "the peer was removed or failed before the notification went out");
            return KVB_ERR;
        }
        post_notif(ctx->ucx, x);
        if (x->status != UCS_OK)
        {
            return KVB_ERR;
        }
        return x->pending > 0 ? KVB_IN_PROGRESS : KVB_OK;
    }
    return KVB_OK;
}

const char *kvb_ucx_xfer_error(kvb_ctx *ctx, uint64_t xfer)
{
    (void)ctx;
    kvb_ucx_xfer *x = (kvb_ucx_xfer *)(uintptr_t)xfer;
    return x->status == UCS_OK ? "" : x->err;
}

static void unlink_xfer(struct kvb_ucx *u, kvb_ucx_xfer *x)
{
    if (x->prev != NULL)
    {
        x->prev->next = x->next;
    }
    else
    {
        u->xfers = x->next;
    }
    if (x->next != NULL)
    {
        x->next->prev = x->prev;
    }
    x->prev = NULL;
    x->next = NULL;
}

void kvb_ucx_release_xfer(kvb_ctx *ctx, uint64_t xfer)
{
    kvb_ucx_xfer *x = (kvb_ucx_xfer *)(uintptr_t)xfer;
    unlink_xfer(ctx->ucx, x);
    if (x->pending > 0)
    {
        /* Requests still in flight: the last callback frees it. */
        x->released = 1;
        return;
    }
    free(x->notif);
    free(x);
}

int kvb_ucx_progress(kvb_ctx *ctx)
{
    return (int)ucp.worker_progress(ctx->ucx->worker);
}

void kvb_ucx_close(kvb_ctx *ctx)
{
    struct kvb_ucx *u = ctx->ucx;
    if (u == NULL)
    {
        return;
    }
    for (int i = 0; i < KVB_MAX_PEERS; i++)
    {
        if (u->peers[i].used)
        {
            kvb_ucx_invalidate_remote(ctx, i);
        }
    }
    /* Closing the endpoints completed every request; what Java did not release is freed here. */
    while (u->xfers != NULL)
    {
        kvb_ucx_xfer *x = u->xfers;
        unlink_xfer(u, x);
        x->released = 1;
        if (x->pending == 0)
        {
            free(x->notif);
            free(x);
        }
    }
    if (u->rkey_buf != NULL)
    {
        ucp.rkey_buffer_release(u->rkey_buf);
    }
    if (u->memh != NULL)
    {
        ucp.mem_unmap(u->context, u->memh);
    }
    ucp.worker_release_address(u->worker, u->waddr);
    ucp.worker_destroy(u->worker);
    ucp.cleanup(u->context);
    free(u);
    ctx->ucx = NULL;
    ctx->pool = NULL;
}
