/*
 * kvbridge internals shared by the ABI layer (kvbridge.c) and the backends (kvbridge_ucx.c, kvbridge_nixl.c).
 * Not part of the ABI.
 */
#ifndef KVBRIDGE_INT_H
#define KVBRIDGE_INT_H

#include "kvbridge.h"

#include <stdarg.h>

#define KVB_NAME_MAX 256

/* One received notification, queued until kvb_drain_notifs. */
typedef struct kvb_notif
{
    struct kvb_notif *next;
    size_t len;
    char data[];
} kvb_notif;

/* A KVB1 blob, viewed in place: "KVB1" | u32 agent_len | agent | u32 waddr_len | waddr | u32 rkey_len | rkey |
 * u64 base | u64 len, little-endian. The NIXL backend puts NIXL's own metadata blob in the waddr slot. */
typedef struct kvb_md_view
{
    const char *agent;
    uint32_t agent_len;
    const void *waddr;
    uint32_t waddr_len;
    const void *rkey;
    uint32_t rkey_len;
    uint64_t base;
    uint64_t len;
} kvb_md_view;

struct kvb_ucx;
struct kvb_nixl;

struct kvb_ctx
{
    int backend;
    int flags;
    char name[KVB_NAME_MAX];
    void *pool;
    uint64_t pool_len;
    kvb_notif *notif_head;
    kvb_notif *notif_tail;
    struct kvb_ucx *ucx;
    struct kvb_nixl *nixl;
};

void kvb_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kvb_md_write(void *buf, size_t cap, size_t *out_len, const char *agent, const void *waddr, size_t waddr_len,
                 const void *rkey, size_t rkey_len, uint64_t base, uint64_t len);
int kvb_md_parse(const void *md, size_t len, kvb_md_view *view, char *err, size_t errlen);
int kvb_notif_push(kvb_ctx *ctx, const void *data, size_t len);
void kvb_notif_clear(kvb_ctx *ctx);
void kvb_pretouch(void *base, uint64_t len);

/* UCX backend (kvbridge_ucx.c). */
int kvb_ucx_load(const char *libucp, char *err, size_t errlen);
const char *kvb_ucx_version(void);
int kvb_ucx_open(kvb_ctx *ctx, char *err, size_t errlen);
int kvb_ucx_pool_alloc(kvb_ctx *ctx, uint64_t bytes, char *err, size_t errlen);
int kvb_ucx_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len);
int kvb_ucx_load_remote_md(kvb_ctx *ctx, const kvb_md_view *view, int *peer, char *err, size_t errlen);
int kvb_ucx_invalidate_remote(kvb_ctx *ctx, int peer);
int kvb_ucx_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen);
int kvb_ucx_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                      uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen);
int kvb_ucx_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err,
                       size_t errlen);
int kvb_ucx_xfer_status(kvb_ctx *ctx, uint64_t xfer);
const char *kvb_ucx_xfer_error(kvb_ctx *ctx, uint64_t xfer);
void kvb_ucx_release_xfer(kvb_ctx *ctx, uint64_t xfer);
int kvb_ucx_progress(kvb_ctx *ctx);
void kvb_ucx_close(kvb_ctx *ctx);

/* NIXL backend (kvbridge_nixl.c). */
int kvb_nixl_load(const char *libnixl, char *err, size_t errlen);
int kvb_nixl_open(kvb_ctx *ctx, char *err, size_t errlen);
int kvb_nixl_pool_alloc(kvb_ctx *ctx, uint64_t bytes, char *err, size_t errlen);
int kvb_nixl_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len);
int kvb_nixl_load_remote_md(kvb_ctx *ctx, const kvb_md_view *view, int *peer, char *err, size_t errlen);
int kvb_nixl_invalidate_remote(kvb_ctx *ctx, int peer);
int kvb_nixl_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen);
int kvb_nixl_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                       uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen);
int kvb_nixl_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err,
                        size_t errlen);
int kvb_nixl_xfer_status(kvb_ctx *ctx, uint64_t xfer);
const char *kvb_nixl_xfer_error(kvb_ctx *ctx, uint64_t xfer);
void kvb_nixl_release_xfer(kvb_ctx *ctx, uint64_t xfer);
int kvb_nixl_progress(kvb_ctx *ctx);
void kvb_nixl_close(kvb_ctx *ctx);

#endif
