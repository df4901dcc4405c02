/*
 * kvbridge ABI layer: the kvb_* entry points, which check their arguments and dispatch to the context's backend,
 * plus what both backends share (the KVB1 metadata blob, the notification queue, error formatting).
 */
#define _GNU_SOURCE
#include "kvbridge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kvb_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
    {
        return;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, errlen, fmt, args);
    va_end(args);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
    {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
    {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
    {
        v = (v << 8) | p[i];
    }
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
    {
        v = (v << 8) | p[i];
    }
    return v;
}

int kvb_md_write(void *buf, size_t cap, size_t *out_len, const char *agent, const void *waddr, size_t waddr_len,
                 const void *rkey, size_t rkey_len, uint64_t base, uint64_t len)
{
    size_t agent_len = strlen(agent);
    size_t need = 4 + 4 + agent_len + 4 + waddr_len + 4 + rkey_len + 8 + 8;
    *out_len = need;
    if (buf == NULL || cap < need)
    {
        return KVB_ERR;
    }
    unsigned char *p = buf;
    memcpy(p, "KVB1", 4);
    p += 4;
    put_u32(p, (uint32_t)agent_len);
    p += 4;
    memcpy(p, agent, agent_len);
    p += agent_len;
    put_u32(p, (uint32_t)waddr_len);
    p += 4;
    if (waddr_len > 0)
    {
        memcpy(p, waddr, waddr_len);
    }
    p += waddr_len;
    put_u32(p, (uint32_t)rkey_len);
    p += 4;
    if (rkey_len > 0)
    {
        memcpy(p, rkey, rkey_len);
    }
    p += rkey_len;
    put_u64(p, base);
    p += 8;
    put_u64(p, len);
    return KVB_OK;
}

/* Reads a u32-length-prefixed field at *pos, checking it fits in len. */
static int md_field(const unsigned char *md, size_t len, size_t *pos, const void **field, uint32_t *field_len)
{
    if (len - *pos < 4)
    {
        return KVB_ERR;
    }
    uint32_t n = get_u32(md + *pos);
    *pos += 4;
    if (len - *pos < n)
    {
        return KVB_ERR;
    }
    *field = md + *pos;
    *field_len = n;
    *pos += n;
    return KVB_OK;
}

int kvb_md_parse(const void *md, size_t len, kvb_md_view *view, char *err, size_t errlen)
{
    const unsigned char *p = md;
    size_t pos = 4;
    const void *agent = NULL;
    if (len < 4 || memcmp(p, "KVB1", 4) != 0)
    {
        kvb_errf(err, errlen, "remote metadata is not a KVB1 blob (%zu bytes)", len);
        return KVB_ERR;
    }
    if (md_field(p, len, &pos, &agent, &view->agent_len) != KVB_OK ||
        md_field(p, len, &pos, &view->waddr, &view->waddr_len) != KVB_OK ||
        md_field(p, len, &pos, &view->rkey, &view->rkey_len) != KVB_OK || len - pos != 16)
    {
        kvb_errf(err, errlen, "remote KVB1 metadata is truncated or malformed (%zu bytes)", len);
        return KVB_ERR;
    }
    view->agent = agent;
    view->base = get_u64(p + pos);
    view->len = get_u64(p + pos + 8);
    return KVB_OK;
}

int kvb_notif_push(kvb_ctx *ctx, const void *data, size_t len)
{
    kvb_notif *n = malloc(sizeof(kvb_notif) + len);
    if (n == NULL)
    {
        return KVB_ERR;
    }
    n->next = NULL;
    n->len = len;
    memcpy(n->data, data, len);
    if (ctx->notif_tail == NULL)
    {
        ctx->notif_head = n;
    }
    else
    {
        ctx->notif_tail->next = n;
    }
    ctx->notif_tail = n;
    return KVB_OK;
}

void kvb_notif_clear(kvb_ctx *ctx)
{
    while (ctx->notif_head != NULL)
    {
        kvb_notif *n = ctx->notif_head;
        ctx->notif_head = n->next;
        free(n);
    }
    ctx->notif_tail = NULL;
}

void kvb_pretouch(void *base, uint64_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile unsigned char *p = base;
    for (uint64_t off = 0; off < len; off += (uint64_t)page)
    {
        p[off] = 0;
    }
}

int kvb_load(const char *libucp, char *err, size_t errlen)
{
    return kvb_ucx_load(libucp == NULL ? "libucp.so.0" : libucp, err, errlen);
}

int kvb_load_nixl(const char *libnixl, char *err, size_t errlen)
{
    return kvb_nixl_load(libnixl, err, errlen);
}

const char *kvb_version(void)
{
    return kvb_ucx_version();
}

kvb_ctx *kvb_open(const char *agent_name, int flags, char *err, size_t errlen)
{
    int backend = flags & 0xff;
    if (agent_name == NULL || strlen(agent_name) == 0 || strlen(agent_name) >= KVB_NAME_MAX)
    {
        kvb_errf(err, errlen, "an agent name of 1 to %d bytes is required", KVB_NAME_MAX - 1);
        return NULL;
    }
    if (backend != KVB_BACKEND_UCX && backend != KVB_BACKEND_NIXL)
    {
        kvb_errf(err, errlen, "unknown kvbridge backend %d", backend);
        return NULL;
    }
    kvb_ctx *ctx = calloc(1, sizeof(kvb_ctx));
    if (ctx == NULL)
    {
        kvb_errf(err, errlen, "out of memory");
        return NULL;
    }
    ctx->backend = backend;
    ctx->flags = flags;
    snprintf(ctx->name, sizeof(ctx->name), "%s", agent_name);
    int rc = backend == KVB_BACKEND_UCX ? kvb_ucx_open(ctx, err, errlen) : kvb_nixl_open(ctx, err, errlen);
    if (rc != KVB_OK)
    {
        free(ctx);
        return NULL;
    }
    return ctx;
}

int kvb_pool_alloc(kvb_ctx *ctx, uint64_t bytes, void **base, char *err, size_t errlen)
{
    if (ctx->pool != NULL)
    {
        kvb_errf(err, errlen, "the pool of %s is already allocated", ctx->name);
        return KVB_ERR;
    }
    if (bytes == 0)
    {
        kvb_errf(err, errlen, "a pool needs at least one byte");
        return KVB_ERR;
    }
    int rc = ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_pool_alloc(ctx, bytes, err, errlen)
                                             : kvb_nixl_pool_alloc(ctx, bytes, err, errlen);
    *base = ctx->pool;
    return rc;
}

int kvb_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len)
{
    if (ctx->pool == NULL)
    {
        *len = 0;
        return KVB_ERR;
    }
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_local_md(ctx, buf, cap, len)
                                           : kvb_nixl_local_md(ctx, buf, cap, len);
}

int kvb_load_remote_md(kvb_ctx *ctx, const void *md, size_t len, int *peer, char *err, size_t errlen)
{
    kvb_md_view view;
    if (kvb_md_parse(md, len, &view, err, errlen) != KVB_OK)
    {
        return KVB_ERR;
    }
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_load_remote_md(ctx, &view, peer, err, errlen)
                                           : kvb_nixl_load_remote_md(ctx, &view, peer, err, errlen);
}

int kvb_invalidate_remote(kvb_ctx *ctx, int peer)
{
    if (peer < 0 || peer >= KVB_MAX_PEERS)
    {
        return KVB_ERR;
    }
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_invalidate_remote(ctx, peer)
                                           : kvb_nixl_invalidate_remote(ctx, peer);
}

int kvb_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen)
{
    if (peer < 0 || peer >= KVB_MAX_PEERS)
    {
        kvb_errf(err, errlen, "no peer %d", peer);
        return KVB_ERR;
    }
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_peer_status(ctx, peer, err, errlen)
                                           : kvb_nixl_peer_status(ctx, peer, err, errlen);
}

int kvb_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                  uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen)
{
    if (peer < 0 || peer >= KVB_MAX_PEERS)
    {
        kvb_errf(err, errlen, "no peer %d", peer);
        return KVB_ERR;
    }
    if (ctx->pool == NULL)
    {
        kvb_errf(err, errlen, "%s has no pool to read into", ctx->name);
        return KVB_ERR;
    }
    for (uint32_t i = 0; i < n; i++)
    {
        if (local_off[i] > ctx->pool_len || ctx->pool_len - local_off[i] < len)
        {
            kvb_errf(err, errlen, "local range [%llu, +%llu) is outside the pool of %llu bytes",
                     (unsigned long long)local_off[i], (unsigned long long)len, (unsigned long long)ctx->pool_len);
            return KVB_ERR;
        }
    }
    return ctx->backend == KVB_BACKEND_UCX
        ? kvb_ucx_post_read(ctx, peer, remote_off, local_off, n, len, notif, notif_len, xfer, err, errlen)
        : kvb_nixl_post_read(ctx, peer, remote_off, local_off, n, len, notif, notif_len, xfer, err, errlen);
}

int kvb_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err, size_t errlen)
{
    if (peer < 0 || peer >= KVB_MAX_PEERS)
    {
        kvb_errf(err, errlen, "no peer %d", peer);
        return KVB_ERR;
    }
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_post_notif(ctx, peer, msg, len, xfer, err, errlen)
                                           : kvb_nixl_post_notif(ctx, peer, msg, len, xfer, err, errlen);
}

int kvb_xfer_status(kvb_ctx *ctx, uint64_t xfer)
{
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_xfer_status(ctx, xfer) : kvb_nixl_xfer_status(ctx, xfer);
}

const char *kvb_xfer_error(kvb_ctx *ctx, uint64_t xfer)
{
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_xfer_error(ctx, xfer) : kvb_nixl_xfer_error(ctx, xfer);
}

void kvb_release_xfer(kvb_ctx *ctx, uint64_t xfer)
{
    if (ctx->backend == KVB_BACKEND_UCX)
    {
        kvb_ucx_release_xfer(ctx, xfer);
    }
    else
    {
        kvb_nixl_release_xfer(ctx, xfer);
    }
}

int kvb_progress(kvb_ctx *ctx)
{
    return ctx->backend == KVB_BACKEND_UCX ? kvb_ucx_progress(ctx) : kvb_nixl_progress(ctx);
}

int kvb_drain_notifs(kvb_ctx *ctx, void *buf, size_t cap, size_t *len)
{
    unsigned char *p = buf;
    size_t used = 0;
    int count = 0;
    while (ctx->notif_head != NULL)
    {
        kvb_notif *n = ctx->notif_head;
        if (cap - used < 4 + n->len)
        {
            if (count == 0)
            {
                *len = 4 + n->len;
                return KVB_ERR;
            }
            break;
        }
        put_u32(p + used, (uint32_t)n->len);
        memcpy(p + used + 4, n->data, n->len);
        used += 4 + n->len;
        count++;
        ctx->notif_head = n->next;
        if (ctx->notif_head == NULL)
        {
            ctx->notif_tail = NULL;
        }
        free(n);
    }
    *len = used;
    return count;
}

void kvb_close(kvb_ctx *ctx)
{
    if (ctx == NULL)
    {
        return;
    }
    if (ctx->backend == KVB_BACKEND_UCX)
    {
        kvb_ucx_close(ctx);
    }
    else
    {
        kvb_nixl_close(ctx);
    }
    kvb_notif_clear(ctx);
    free(ctx);
}
