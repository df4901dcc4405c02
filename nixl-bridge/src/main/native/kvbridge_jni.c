/*
 * JNI wrappers of the kvb_* ABI for dev.tapedeck.nixl.KvBridgeNative, one per native method. Failures the Java side
 * must handle throw dev.tapedeck.nixl.KvTransferException with the native reason. Threading is the ABI's: context
 * functions run on the plane's owner thread only.
 */
#define _GNU_SOURCE
#include "kvbridge.h"
#include "dev_tapedeck_nixl_KvBridgeNative.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ERR_LEN 512
#define DRAIN_CAP 65536

static kvb_ctx *ctx_of(jlong ctx)
{
    return (kvb_ctx *)(uintptr_t)ctx;
}

static void throw_transfer(JNIEnv *env, const char *message)
{
    jclass cls = (*env)->FindClass(env, "dev/tapedeck/nixl/KvTransferException");
    if (cls != NULL)
    {
        (*env)->ThrowNew(env, cls, message);
    }
}

static char *utf(JNIEnv *env, jstring s)
{
    if (s == NULL)
    {
        return NULL;
    }
    const char *chars = (*env)->GetStringUTFChars(env, s, NULL);
    if (chars == NULL)
    {
        return NULL;
    }
    char *copy = strdup(chars);
    (*env)->ReleaseStringUTFChars(env, s, chars);
    return copy;
}

static jbyteArray bytes_of(JNIEnv *env, const void *data, size_t len)
{
    jbyteArray out = (*env)->NewByteArray(env, (jsize)len);
    if (out != NULL)
    {
        (*env)->SetByteArrayRegion(env, out, 0, (jsize)len, (const jbyte *)data);
    }
    return out;
}

JNIEXPORT jstring JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nLoad(JNIEnv *env, jclass cls, jstring lib)
{
    (void)cls;
    char err[ERR_LEN] = "";
    char *path = utf(env, lib);
    int rc = kvb_load(path, err, sizeof(err));
    free(path);
    return rc == KVB_OK ? NULL : (*env)->NewStringUTF(env, err);
}

JNIEXPORT jstring JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nLoadNixl(JNIEnv *env, jclass cls, jstring lib)
{
    (void)cls;
    char err[ERR_LEN] = "";
    char *path = utf(env, lib);
    int rc = kvb_load_nixl(path, err, sizeof(err));
    free(path);
    return rc == KVB_OK ? NULL : (*env)->NewStringUTF(env, err);
}

JNIEXPORT jstring JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nVersion(JNIEnv *env, jclass cls)
{
    (void)cls;
    return (*env)->NewStringUTF(env, kvb_version());
}

JNIEXPORT jlong JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nOpen(JNIEnv *env, jclass cls, jstring agent,
                                                                    jint flags)
{
    (void)cls;
    char err[ERR_LEN] = "";
    char *name = utf(env, agent);
    kvb_ctx *ctx = kvb_open(name, flags, err, sizeof(err));
    free(name);
    if (ctx == NULL)
    {
        throw_transfer(env, err);
        return 0;
    }
    return (jlong)(uintptr_t)ctx;
}

JNIEXPORT jlong JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nPoolAlloc(JNIEnv *env, jclass cls, jlong ctx,
                                                                         jlong bytes)
{
    (void)cls;
    char err[ERR_LEN] = "";
    void *base = NULL;
    if (bytes <= 0 || kvb_pool_alloc(ctx_of(ctx), (uint64_t)bytes, &base, err, sizeof(err)) != KVB_OK)
    {
        throw_transfer(env, bytes <= 0 ? "a pool needs a positive size" : err);
        return 0;
    }
    return (jlong)(uintptr_t)base;
}

JNIEXPORT jobject JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nPoolBuffer(JNIEnv *env, jclass cls, jlong base,
                                                                            jlong offset, jlong bytes)
{
    (void)cls;
    char *p = (char *)(uintptr_t)base;
    return (*env)->NewDirectByteBuffer(env, p + offset, bytes);
}

JNIEXPORT jbyteArray JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nLocalMd(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)cls;
    size_t len = 0;
    kvb_local_md(ctx_of(ctx), NULL, 0, &len);
    void *buf = malloc(len == 0 ? 1 : len);
    if (buf == NULL || len == 0 || kvb_local_md(ctx_of(ctx), buf, len, &len) != KVB_OK)
    {
        free(buf);
        throw_transfer(env, "no local metadata: the pool is not allocated");
        return NULL;
    }
    jbyteArray out = bytes_of(env, buf, len);
    free(buf);
    return out;
}

JNIEXPORT jint JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nLoadRemoteMd(JNIEnv *env, jclass cls, jlong ctx,
                                                                           jbyteArray md)
{
    (void)cls;
    char err[ERR_LEN] = "";
    jsize len = (*env)->GetArrayLength(env, md);
    jbyte *bytes = (*env)->GetByteArrayElements(env, md, NULL);
    if (bytes == NULL)
    {
        return -1;
    }
    int peer = -1;
    int rc = kvb_load_remote_md(ctx_of(ctx), bytes, (size_t)len, &peer, err, sizeof(err));
    (*env)->ReleaseByteArrayElements(env, md, bytes, JNI_ABORT);
    if (rc != KVB_OK)
    {
        throw_transfer(env, err);
        return -1;
    }
    return peer;
}

JNIEXPORT void JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nInvalidateRemote(JNIEnv *env, jclass cls, jlong ctx,
                                                                               jint peer)
{
    (void)env;
    (void)cls;
    kvb_invalidate_remote(ctx_of(ctx), peer);
}

JNIEXPORT jstring JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nPeerStatus(JNIEnv *env, jclass cls, jlong ctx,
                                                                            jint peer)
{
    (void)cls;
    char err[ERR_LEN] = "";
    return kvb_peer_status(ctx_of(ctx), peer, err, sizeof(err)) == KVB_OK ? NULL : (*env)->NewStringUTF(env, err);
}

JNIEXPORT jlong JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nPostRead(JNIEnv *env, jclass cls, jlong ctx,
                                                                        jint peer, jlongArray remote_off,
                                                                        jlongArray local_off, jlong len,
                                                                        jbyteArray notif)
{
    (void)cls;
    char err[ERR_LEN] = "";
    jsize n = (*env)->GetArrayLength(env, remote_off);
    if (n != (*env)->GetArrayLength(env, local_off) || len <= 0)
    {
        throw_transfer(env, "a read needs as many local as remote offsets and a positive length");
        return 0;
    }
    jsize notif_len = notif == NULL ? 0 : (*env)->GetArrayLength(env, notif);
    jlong *remote = (*env)->GetLongArrayElements(env, remote_off, NULL);
    jlong *local = (*env)->GetLongArrayElements(env, local_off, NULL);
    jbyte *msg = notif_len == 0 ? NULL : (*env)->GetByteArrayElements(env, notif, NULL);
    uint64_t xfer = 0;
    int rc = KVB_ERR;
    if (remote != NULL && local != NULL && (notif_len == 0 || msg != NULL))
    {
        rc = kvb_post_read(ctx_of(ctx), peer, (const uint64_t *)remote, (const uint64_t *)local, (uint32_t)n,
                           (uint64_t)len, msg, (size_t)notif_len, &xfer, err, sizeof(err));
    }
    if (msg != NULL)
    {
        (*env)->ReleaseByteArrayElements(env, notif, msg, JNI_ABORT);
    }
    if (local != NULL)
    {
        (*env)->ReleaseLongArrayElements(env, local_off, local, JNI_ABORT);
    }
    if (remote != NULL)
    {
        (*env)->ReleaseLongArrayElements(env, remote_off, remote, JNI_ABORT);
    }
    if (rc != KVB_OK)
    {
        if (!(*env)->ExceptionCheck(env))
        {
            throw_transfer(env, err);
        }
        return 0;
    }
    return (jlong)xfer;
}

JNIEXPORT jlong JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nPostNotif(JNIEnv *env, jclass cls, jlong ctx,
                                                                         jint peer, jbyteArray msg)
{
    (void)cls;
    char err[ERR_LEN] = "";
    jsize len = (*env)->GetArrayLength(env, msg);
    jbyte *bytes = (*env)->GetByteArrayElements(env, msg, NULL);
    if (bytes == NULL)
    {
        return 0;
    }
    uint64_t xfer = 0;
    int rc = kvb_post_notif(ctx_of(ctx), peer, bytes, (size_t)len, &xfer, err, sizeof(err));
    (*env)->ReleaseByteArrayElements(env, msg, bytes, JNI_ABORT);
    if (rc != KVB_OK)
    {
        throw_transfer(env, err);
        return 0;
    }
    return (jlong)xfer;
}

JNIEXPORT jint JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nXferStatus(JNIEnv *env, jclass cls, jlong ctx,
                                                                         jlong xfer)
{
    (void)env;
    (void)cls;
    return kvb_xfer_status(ctx_of(ctx), (uint64_t)xfer);
}

JNIEXPORT jstring JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nXferError(JNIEnv *env, jclass cls, jlong ctx,
                                                                           jlong xfer)
{
    (void)cls;
    return (*env)->NewStringUTF(env, kvb_xfer_error(ctx_of(ctx), (uint64_t)xfer));
}

JNIEXPORT void JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nReleaseXfer(JNIEnv *env, jclass cls, jlong ctx,
                                                                          jlong xfer)
{
    (void)env;
    (void)cls;
    kvb_release_xfer(ctx_of(ctx), (uint64_t)xfer);
}

JNIEXPORT jint JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nProgress(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    return kvb_progress(ctx_of(ctx));
}

JNIEXPORT jbyteArray JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nDrainNotifs(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)cls;
    size_t cap = DRAIN_CAP;
    void *buf = malloc(cap);
    size_t len = 0;
    int count = buf == NULL ? KVB_ERR : kvb_drain_notifs(ctx_of(ctx), buf, cap, &len);
    if (count == KVB_ERR && buf != NULL)
    {
        /* The oldest notification alone is larger than the buffer: len says how large. */
        free(buf);
        cap = len;
        buf = malloc(cap);
        count = buf == NULL ? KVB_ERR : kvb_drain_notifs(ctx_of(ctx), buf, cap, &len);
    }
    jbyteArray out = count > 0 ? bytes_of(env, buf, len) : NULL;
    free(buf);
    return out;
}

JNIEXPORT void JNICALL Java_dev_tapedeck_nixl_KvBridgeNative_nClose(JNIEnv *env, jclass cls, jlong ctx)
{
    (void)env;
    (void)cls;
    kvb_close(ctx_of(ctx));
}
