/*
 * kvbridge: tapedeck's flat C ABI for moving KV blocks between processes (the kvb_* functions), with two backends
 * loaded at run time through dlopen: UCX (libucp.so.0) and NIXL (libnixl_capi.so). Nothing here links either
 * library, so loading libkvbridge.so into a JVM installs no signal handler and needs neither at build time beyond
 * the UCX headers.
 *
 * Threading: kvb_load, kvb_load_nixl and kvb_version may be called from any thread. Every other function takes a
 * context and must be called from that context's one owner thread (the plane's I/O thread); the UCX worker runs in
 * UCS_THREAD_MODE_SERIALIZED and callbacks fire inside kvb_progress on that thread.
 *
 * Return codes: 0 success (KVB_OK), 1 in progress (KVB_IN_PROGRESS), negative on error; functions that can fail
 * for a reason write it to err (NUL-terminated, truncated to errlen).
 */
#ifndef KVBRIDGE_H
#define KVBRIDGE_H

#include <stddef.h>
#include <stdint.h>

#define KVB_ABI_VERSION 1

#define KVB_OK 0
#define KVB_IN_PROGRESS 1
#define KVB_ERR (-1)

/* kvb_open flags: the backend (low byte), and for UCX the endpoints' error handling. By default a peer whose pool
 * ucp_rkey_ptr can map (same host, shared memory) gets UCP_ERR_HANDLING_MODE_NONE, since UCX 1.13 shared memory has
 * no peer failure handler and asking for one routes reads over TCP; other peers get UCP_ERR_HANDLING_MODE_PEER, or
 * none when no shared transport supports it. The flags force one or the other. */
#define KVB_BACKEND_UCX 0
#define KVB_BACKEND_NIXL 1
#define KVB_EP_ERR_PEER 0x100
#define KVB_EP_ERR_NONE 0x200

#define KVB_MAX_PEERS 256

typedef struct kvb_ctx kvb_ctx;

int kvb_load(const char *libucp, char *err, size_t errlen);
int kvb_load_nixl(const char *libnixl, char *err, size_t errlen);
const char *kvb_version(void);

kvb_ctx *kvb_open(const char *agent_name, int flags, char *err, size_t errlen);
int kvb_pool_alloc(kvb_ctx *ctx, uint64_t bytes, void **base, char *err, size_t errlen);
int kvb_local_md(kvb_ctx *ctx, void *buf, size_t cap, size_t *len);
int kvb_load_remote_md(kvb_ctx *ctx, const void *md, size_t len, int *peer, char *err, size_t errlen);
int kvb_invalidate_remote(kvb_ctx *ctx, int peer);
int kvb_peer_status(kvb_ctx *ctx, int peer, char *err, size_t errlen);
int kvb_post_read(kvb_ctx *ctx, int peer, const uint64_t *remote_off, const uint64_t *local_off, uint32_t n,
                  uint64_t len, const void *notif, size_t notif_len, uint64_t *xfer, char *err, size_t errlen);
int kvb_post_notif(kvb_ctx *ctx, int peer, const void *msg, size_t len, uint64_t *xfer, char *err, size_t errlen);
int kvb_xfer_status(kvb_ctx *ctx, uint64_t xfer);
const char *kvb_xfer_error(kvb_ctx *ctx, uint64_t xfer);
void kvb_release_xfer(kvb_ctx *ctx, uint64_t xfer);
int kvb_progress(kvb_ctx *ctx);
int kvb_drain_notifs(kvb_ctx *ctx, void *buf, size_t cap, size_t *len);
void kvb_close(kvb_ctx *ctx);

#endif
