/*
 * kvbridge NIXL backend over libnixl_capi.so (NIXL's flat C API), opened with dlopen. The prototypes below are
 * declared by hand from the C API's documented meaning (opaque handles, nixl_capi_status_t); NIXL's header is not
 * used. An agent is created with NIXL's defaults and the UCX backend; the pool is page-aligned DRAM registered with
 * the agent; a read is one create_xfer_req(READ) over per-block descriptors carrying the notification, then
 * post_xfer_req and get_xfer_status polling; notifications come from get_notifs during kvb_progress.
 */
#define _GNU_SOURCE
#include "kvbridge_int.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nixl_status;
typedef void *nixl_h;

#define NIXL_OK 0
#define NIXL_IN_PROG 1
#define NIXL_MEM_DRAM 0
#define NIXL_OP_READ 0

static struct
{
    void *handle;
    char path[512];
    nixl_status (*create_agent)(const char *, nixl_h *);
    nixl_status (*destroy_agent)(nixl_h);
    nixl_status (*get_plugin_params)(nixl_h, const char *, nixl_h *, nixl_h *);
    nixl_status (*destroy_mem_list)(nixl_h);
    nixl_status (*destroy_params)(nixl_h);
    nixl_status (*create_backend)(nixl_h, const char *, nixl_h, nixl_h *);
    nixl_status (*destroy_backend)(nixl_h);
    nixl_status (*create_opt_args)(nixl_h *);
    nixl_status (*destroy_opt_args)(nixl_h);
    nixl_status (*opt_args_add_backend)(nixl_h, nixl_h);
    nixl_status (*opt_args_set_notif_msg)(nixl_h, const void *, size_t);
    nixl_status (*opt_args_set_has_notif)(nixl_h, bool);
    nixl_status (*create_reg_dlist)(int, nixl_h *);
    nixl_status (*destroy_reg_dlist)(nixl_h);
    nixl_status (*reg_dlist_add_desc)(nixl_h, uintptr_t, size_t, uint64_t, const void *, size_t);
    nixl_status (*register_mem)(nixl_h, nixl_h, nixl_h);
    nixl_status (*deregister_mem)(nixl_h, nixl_h, nixl_h);
    nixl_status (*get_local_md)(nixl_h, void **, size_t *);
    nixl_status (*load_remote_md)(nixl_h, const void *, size_t, char **);
    nixl_status (*invalidate_remote_md)(nixl_h, const char *);
    nixl_status (*create_xfer_dlist)(int, nixl_h *);
    nixl_status (*destroy_xfer_dlist)(nixl_h);
    nixl_status (*xfer_dlist_add_desc)(nixl_h, uintptr_t, size_t, uint64_t);
    nixl_status (*create_xfer_req)(nixl_h, int, nixl_h, nixl_h, const char *, nixl_h *, nixl_h);
    nixl_status (*post_xfer_req)(nixl_h, nixl_h, nixl_h);
    nixl_status (*get_xfer_status)(nixl_h, nixl_h);
    nixl_status (*release_xfer_req)(nixl_h, nixl_h);
    nixl_status (*destroy_xfer_req)(nixl_h);
    nixl_status (*gen_notif)(nixl_h, const char *, const void *, size_t, nixl_h);
    nixl_status (*create_notif_map)(nixl_h *);
    nixl_status (*destroy_notif_map)(nixl_h);
    nixl_status (*get_notifs)(nixl_h, nixl_h, nixl_h);
    nixl_status (*notif_map_size)(nixl_h, size_t *);
    nixl_status (*notif_map_get_agent_at)(nixl_h, size_t, const char **);
    nixl_status (*notif_map_get_notifs_size)(nixl_h, const char *, size_t *);
    nixl_status (*notif_map_get_notif)(nixl_h, const char *, size_t, const void **, size_t *);
} nx;

typedef struct kvb_nixl_peer
{
    int used;
    uint64_t base;
    uint64_t len;
    char agent[KVB_NAME_MAX];
} kvb_nixl_peer;

typedef struct kvb_nixl_xfer
{
    nixl_h req;
    nixl_status status;
    char err[256];
} kvb_nixl_xfer;

struct kvb_nixl
{
    nixl_h agent;
    nixl_h backend;
    nixl_h args;
    nixl_h reg;
    kvb_nixl_peer peers[KVB_MAX_PEERS];
};

static int nx_sym(void **slot, const char *name, char *err, size_t errlen)
{
    *slot = dlsym(nx.handle, name);
    if (*slot == NULL)
    {
        kvb_errf(err, errlen, "%s has no %s: %s", nx.path, name, dlerror());
        return KVB_ERR;
    }
    return KVB_OK;
}

#define NX(field) \
    if (nx_sym((void **)&nx.field, "nixl_capi_" #field, err, errlen) != KVB_OK) \
    { \
        return KVB_ERR; \
    }

static int nx_syms(char *err, size_t errlen)
{
    NX(create_agent);
    NX(destroy_agent);
    NX(get_plugin_params);
    NX(destroy_mem_list);
    NX(destroy_params);
    NX(create_backend);
    NX(destroy_backend);
    NX(create_opt_args);
    NX(destroy_opt_args);
    NX(opt_args_add_backend);
    NX(opt_args_set_notif_msg);
    NX(opt_args_set_has_notif);
    NX(create_reg_dlist);
    NX(destroy_reg_dlist);
    NX(reg_dlist_add_desc);
    NX(register_mem);
    NX(deregister_mem);
    NX(get_local_md);
    NX(load_remote_md);
    NX(invalidate_remote_md);
    NX(create_xfer_dlist);
    NX(destroy_xfer_dlist);
    NX(xfer_dlist_add_desc);
    NX(create_xfer_req);
    NX(post_xfer_req);
    NX(get_xfer_status);
    NX(release_xfer_req);
    NX(destroy_xfer_req);
    NX(gen_notif);
    NX(create_notif_map);
    NX(destroy_notif_map);
    NX(get_notifs);
    NX(notif_map_size);
    NX(notif_map_get_agent_at);
    NX(notif_map_get_notifs_size);
    NX(notif_map_get_notif);
    return KVB_OK;
}

/* Opens the library: the given path, else $NIXL_PREFIX/lib*, /opt/nvidia/nvda_nixl/lib*, the default search path. */
int kvb_nixl_load(const char *libnixl, char *err, size_t errlen)
{
    if (nx.handle != NULL)
    {
        return KVB_OK;
    }
    setenv("UCX_ERROR_SIGNALS", "", 0);
    setenv("UCX_MEM_EVENTS", "no", 0);
    setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
    const char *prefix = getenv("NIXL_PREFIX");
    const char *dirs[] = {"lib", "lib64", "lib/x86_64-linux-gnu"};
    char tried[1024] = "";
    for (int attempt = 0; attempt < 8 && nx.handle == NULL; attempt++)
    {
        char path[512] = "";
        if (attempt == 0 && libnixl != NULL && libnixl[0] != '\0')
        {
            snprintf(path, sizeof(path), "%s", libnixl);
        }
        else if (attempt >= 1 && attempt <= 3 && prefix != NULL && (libnixl == NULL || libnixl[0] == '\0'))
        {
            snprintf(path, sizeof(path), "%s/%s/libnixl_capi.so", prefix, dirs[attempt - 1]);
        }
        else if (attempt >= 4 && attempt <= 6 && (libnixl == NULL || libnixl[0] == '\0'))
        {
            snprintf(path, sizeof(path), "/opt/nvidia/nvda_nixl/%s/libnixl_capi.so", dirs[attempt - 4]);
        }
        else if (attempt == 7 && (libnixl == NULL || libnixl[0] == '\0'))
        {
            snprintf(path, sizeof(path), "libnixl_capi.so");
        }
        if (path[0] == '\0')
        {
            continue;
        }
        nx.handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (nx.handle != NULL)
        {
            snprintf(nx.path, sizeof(nx.path), "%s", path);
        }
        else
        {
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof(tried) - used, "%s%s", used == 0 ? "" : "; ", dlerror());
        }
    }
    if (nx.handle == NULL)
    {
        kvb_errf(err, errlen, "cannot dlopen libnixl_capi.so (%s)", tried);
        return KVB_ERR;
    }
    if (nx_syms(err, errlen) != KVB_OK)
    {
        dlclose(nx.handle);
        nx.handle = NULL;
        return KVB_ERR;
    }
    return KVB_OK;
}

static void nx_teardown(struct kvb_nixl *n)
{
    if (n->args != NULL)
    {
        nx.destroy_opt_args(n->args);
    }
    if (n->backend != NULL)
    {
        nx.destroy_backend(n->backend);
    }
    if (n->agent != NULL)
    {
        nx.destroy_agent(n->agent);
    }
    free(n);
}

int kvb_nixl_open(kvb_ctx *ctx, char *err, size_t errlen)
{
    if (nx.handle == NULL)
    {
        kvb_errf(err, errlen, "libnixl_capi is not loaded (kvb_load_nixl)");
        return KVB_ERR;
    }
    struct kvb_nixl *n = calloc(1, sizeof(struct kvb_nixl));
    if (n == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return KVB_ERR;
    }
    nixl_h mems = NULL;
    nixl_h params = NULL;
    nixl_status rc = nx.create_agent(ctx->name, &n->agent);
    if (rc != NIXL_OK)
    {
        n->agent = NULL;
        kvb_errf(err, errlen, "nixl_capi_create_agent(%s) failed: %d", ctx->name, rc);
        nx_teardown(n);
        return KVB_ERR;
    }
    rc = nx.get_plugin_params(n->agent, "UCX", &mems, &params);
    if (rc == NIXL_OK)
    {
        rc = nx.create_backend(n->agent, "UCX", params, &n->backend);
        nx.destroy_mem_list(mems);
        nx.destroy_params(params);
    }
    if (rc == NIXL_OK)
    {
        rc = nx.create_opt_args(&n->args);
    }
    if (rc == NIXL_OK)
    {
        rc = nx.opt_args_add_backend(n->args, n->backend);
    }
    if (rc != NIXL_OK)
    {
        kvb_errf(err, errlen, "NIXL UCX backend setup for %s failed: %d", ctx->name, rc);
        nx_teardown(n);
        return KVB_ERR;
    }
    ctx->nixl = n;
    return KVB_OK;
}

int kvb_nixl_pool_alloc(kvb_ctx *ctx, uint64_t bytes, char *err, size_t errlen)
{
    struct kvb_nixl *n = ctx->nixl;
    void *pool = NULL;
    if (posix_memalign(&pool, 4096, bytes) != 0)
    {
        kvb_errf(err, errlen, "cannot allocate a pool of %llu bytes", (unsigned long long)bytes);
        return KVB_ERR;
    }
    memset(pool, 0, bytes);
    nixl_status rc = nx.create_reg_dlist(NIXL_MEM_DRAM, &n->reg);
    if (rc == NIXL_OK)
    {
        rc = nx.reg_dlist_add_desc(n->reg, (uintptr_t)pool, bytes, 0, NULL, 0);
    }
    if (rc == NIXL_OK)
    {
        rc = nx.register_mem(n->agent, n->reg, n->args);
    }
    if (rc != NIXL_OK)
    {
        kvb_errf(err, errlen, "nixl_capi_register_mem of %llu bytes failed: %d", (unsigned long long)bytes, rc);
        if (n->reg != NULL)
        {
            nx.destroy_reg_dlist(n->reg);
            n->reg = NULL;
        }
        free(pool);
        return KVB_ERR;
    }
    ctx->pool = pool;
    ctx->pool_len = bytes;
    return KVB_OK;
}

int kvb_nixl_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len)
{
    void *md = NULL;
    size_t md_len = 0;
    if (nx.get_local_md(ctx->nixl->agent, &md, &md_len) != NIXL_OK)
    {
        *len = 0;
        return KVB_ERR;
    }
    int rc = kvb_md_write(buf, cap, len, ctx->name, md, md_len, NULL, 0, (uint64_t)(uintptr_t)ctx->pool,
                          ctx->pool_len);
    free(md);
    return rc;
}

int kvb_nixl_load_remote_md(kvb_ctx *ctx, const kvb_md_view *view, int *peer, char *err, size_t errlen)
{
    struct kvb_nixl *n = ctx->nixl;
    int slot = -1;
    for (int i = 0; i < KVB_MAX_PEERS && slot < 0; i++)
    {
        slot = n->peers[i].used ? -1 : i;
    }
    if (slot < 0 || view->agent_len >= KVB_NAME_MAX || view->waddr_len == 0)
    {
        kvb_errf(err, errlen, slot < 0 ? "too many peers" : "remote metadata has no NIXL agent metadata");
        return KVB_ERR;
    }
    char *name = NULL;
    nixl_status rc = nx.load_remote_md(n->agent, view->waddr, view->waddr_len, &name);
    if (rc != NIXL_OK || name == NULL)
    {
        kvb_errf(err, errlen, "nixl_capi_load_remote_md failed: %d", rc);
        return KVB_ERR;
    }
    kvb_nixl_peer *p = &n->peers[slot];
    memset(p, 0, sizeof(*p));
    int same = strlen(name) == view->agent_len && memcmp(name, view->agent, view->agent_len) == 0;
    snprintf(p->agent, sizeof(p->agent), "%s", name);
    free(name);
    if (!same)
    {
        kvb_errf(err, errlen, "NIXL metadata names agent %s, the KVB1 blob another", p->agent);
        nx.invalidate_remote_md(n->agent, p->agent);
        return KVB_ERR;
    }
    p->base = view->base;
    p->len = view->len;
    p->used = 1;
    *peer = slot;
    return KVB_OK;
}

int kvb_nixl_invalidate_remote(kvb_ctx *ctx, int peer)
{
    kvb_nixl_peer *p = &ctx->nixl->peers[peer];
    if (!p->used)
    {
        return KVB_ERR;
    }
    nx.invalidate_remote_md(ctx->nixl->agent, p->agent);
    p->used = 0;
    return KVB_OK;
}

int kvb_nixl_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen)
{
    if (!ctx->nixl->peers[peer].used)
    {
        kvb_errf(err, errlen, "no peer %d", peer);
        return KVB_ERR;
    }
    return KVB_OK;
}

static nixl_h nx_dlist(void)
{
    nixl_h list = NULL;
    return nx.create_xfer_dlist(NIXL_MEM_DRAM, &list) == NIXL_OK ? list : NULL;
}

int kvb_nixl_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                       uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen)
{
    struct kvb_nixl *nc = ctx->nixl;
    if (kvb_nixl_peer_status(ctx, peer, err, errlen) != KVB_OK)
    {
        return KVB_ERR;
    }
    kvb_nixl_peer *p = &nc->peers[peer];
    for (uint32_t i = 0; i < n; i++)
    {
        if (remote_off[i] > p->len || p->len - remote_off[i] < len)
        {
            kvb_errf(err, errlen, "remote range [%llu, +%llu) is outside the pool of %s",
                     (unsigned long long)remote_off[i], (unsigned long long)len, p->agent);
            return KVB_ERR;
        }
    }
    kvb_nixl_xfer *x = calloc(1, sizeof(kvb_nixl_xfer));
    nixl_h local = nx_dlist();
    nixl_h remote = nx_dlist();
    nixl_h args = NULL;
    nixl_status rc = x == NULL || local == NULL || remote == NULL ? -1 : nx.create_opt_args(&args);
    for (uint32_t i = 0; i < n && rc == NIXL_OK; i++)
    {
        rc = nx.xfer_dlist_add_desc(local, (uintptr_t)ctx->pool + local_off[i], len, 0);
        if (rc == NIXL_OK)
        {
            rc = nx.xfer_dlist_add_desc(remote, (uintptr_t)(p->base + remote_off[i]), len, 0);
        }
    }
    if (rc == NIXL_OK)
    {
        rc = nx.opt_args_add_backend(args, nc->backend);
    }
    if (rc == NIXL_OK && notif_len > 0)
    {
        rc = nx.opt_args_set_has_notif(args, true);
        rc = rc == NIXL_OK ? nx.opt_args_set_notif_msg(args, notif, notif_len) : rc;
    }
    if (rc == NIXL_OK)
    {
        rc = nx.create_xfer_req(nc->agent, NIXL_OP_READ, local, remote, p->agent, &x->req, args);
    }
    if (rc == NIXL_OK)
    {
        rc = nx.post_xfer_req(nc->agent, x->req, args);
        x->status = rc == NIXL_IN_PROG ? NIXL_OK : rc;
        rc = NIXL_OK;
    }
    if (args != NULL)
    {
        nx.destroy_opt_args(args);
    }
    if (local != NULL)
    {
        nx.destroy_xfer_dlist(local);
    }
    if (remote != NULL)
    {
        nx.destroy_xfer_dlist(remote);
    }
    if (rc != NIXL_OK)
    {
        kvb_errf(err, errlen, "NIXL READ from %s could not be created: %d", p->agent, rc);
        if (x != NULL && x->req != NULL)
        {
            nx.destroy_xfer_req(x->req);
        }
        free(x);
        return KVB_ERR;
    }
    if (x->status != NIXL_OK)
    {
        snprintf(x->err, sizeof(x->err), "nixl_capi_post_xfer_req failed: %d", x->status);
    }
    *xfer = (uint64_t)(uintptr_t)x;
    return KVB_OK;
}

int kvb_nixl_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err,
                        size_t errlen)
{
    struct kvb_nixl *nc = ctx->nixl;
    if (kvb_nixl_peer_status(ctx, peer, err, errlen) != KVB_OK)
    {
        return KVB_ERR;
    }
    nixl_status rc = nx.gen_notif(nc->agent, nc->peers[peer].agent, msg, len, nc->args);
    if (rc != NIXL_OK)
    {
        kvb_errf(err, errlen, "nixl_capi_gen_notif to %s failed: %d", nc->peers[peer].agent, rc);
        return KVB_ERR;
    }
    kvb_nixl_xfer *x = calloc(1, sizeof(kvb_nixl_xfer));
    if (x == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return KVB_ERR;
    }
    *xfer = (uint64_t)(uintptr_t)x;
    return KVB_OK;
}

int kvb_nixl_xfer_status(kvb_ctx *ctx, uint64_t xfer)
{
    kvb_nixl_xfer *x = (kvb_nixl_xfer *)(uintptr_t)xfer;
    if (x->status != NIXL_OK)
    {
        return KVB_ERR;
    }
    if (x->req == NULL)
    {
        return KVB_OK;
    }
    nixl_status rc = nx.get_xfer_status(ctx->nixl->agent, x->req);
    if (rc == NIXL_OK || rc == NIXL_IN_PROG)
    {
        return rc == NIXL_OK ? KVB_OK : KVB_IN_PROGRESS;
    }
    x->status = rc;
    snprintf(x->err, sizeof(x->err), "NIXL transfer failed: status %d", rc);
    return KVB_ERR;
}

const char *kvb_nixl_xfer_error(kvb_ctx *ctx, uint64_t xfer)
{
    (void)ctx;
    kvb_nixl_xfer *x = (kvb_nixl_xfer *)(uintptr_t)xfer;
    return x->status == NIXL_OK ? "" : x->err;
}

void kvb_nixl_release_xfer(kvb_ctx *ctx, uint64_t xfer)
{
    kvb_nixl_xfer *x = (kvb_nixl_xfer *)(uintptr_t)xfer;
    if (x->req != NULL)
    {
        nx.release_xfer_req(ctx->nixl->agent, x->req);
        nx.destroy_xfer_req(x->req);
    }
    free(x);
}

int kvb_nixl_progress(kvb_ctx *ctx)
{
    nixl_h map = NULL;
    if (nx.create_notif_map(&map) != NIXL_OK)
    {
        return 0;
    }
    int events = 0;
    size_t agents = 0;
    if (nx.get_notifs(ctx->nixl->agent, map, ctx->nixl->args) == NIXL_OK &&
        nx.notif_map_size(map, &agents) == NIXL_OK)
    {
        for (size_t a = 0; a < agents; a++)
        {
            const char *agent = NULL;
            size_t count = 0;
            if (nx.notif_map_get_agent_at(map, a, &agent) != NIXL_OK ||
                nx.notif_map_get_notifs_size(map, agent, &count) != NIXL_OK)
            {
                continue;
            }
            for (size_t i = 0; i < count; i++)
            {
                const void *data = NULL;
                size_t len = 0;
                if (nx.notif_map_get_notif(map, agent, i, &data, &len) == NIXL_OK)
                {
                    kvb_notif_push(ctx, data, len);
                    events++;
                }
            }
        }
    }
    nx.destroy_notif_map(map);
    return events;
}

void kvb_nixl_close(kvb_ctx *ctx)
{
    struct kvb_nixl *n = ctx->nixl;
    if (n == NULL)
    {
        return;
    }
    for (int i = 0; i < KVB_MAX_PEERS; i++)
    {
        if (n->peers[i].used)
        {
            kvb_nixl_invalidate_remote(ctx, i);
        }
    }
    if (n->reg != NULL)
    {
        nx.deregister_mem(n->agent, n->reg, n->args);
        nx.destroy_reg_dlist(n->reg);
    }
    nx_teardown(n);
    free(ctx->pool);
    ctx->pool = NULL;
    ctx->nixl = NULL;
}
