package dev.tapedeck.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * XXH3's 128-bit hash with seed 0 and the default secret ({@code XXH3_128bits}, what Python's
 * {@code xxhash.xxh3_128_digest} computes and vLLM's {@code xxhash_cbor} prefix-caching hash uses), written from the
 * algorithm of the xxHash library (BSD-2-Clause): the short, 17-128, 129-240 byte and long (stripes of 64 bytes,
 * blocks of 1024) paths. The digest is the canonical form: the high 64 bits then the low 64 bits, each big-endian.
 * <p>
 * <b>Not thread safe</b>: one instance per user (the two halves of a result and the long path's accumulators are
 * fields); it allocates nothing after construction.
 */
final class Xxh3
{
    /** Bytes of a digest. */
    static final int DIGEST_BYTES = 16;

    private static final VarHandle LE64 = MethodHandles.byteArrayViewVarHandle(long[].class,
        ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE32 = MethodHandles.byteArrayViewVarHandle(int[].class,
        ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle BE64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private static final long PRIME32_1 = 0x9E3779B1L;
    private static final long PRIME32_2 = 0x85EBCA77L;
    private static final long PRIME32_3 = 0xC2B2AE3DL;
    private static final long PRIME64_1 = 0x9E3779B185EBCA87L;
    private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;
    private static final long PRIME64_3 = 0x165667B19E3779F9L;
    private static final long PRIME64_4 = 0x85EBCA77C2B2AE63L;
    private static final long PRIME64_5 = 0x27D4EB2F165667C5L;
    private static final long PRIME_MX1 = 0x165667919E3779F9L;
    private static final long PRIME_MX2 = 0x9FB21C651E98DF25L;
    private static final int STRIPE_BYTES = 64;
    private static final int SECRET_BYTES = 192;
    private static final int STRIPES_PER_BLOCK = (SECRET_BYTES - STRIPE_BYTES) / 8;
    private static final int BLOCK_BYTES = STRIPE_BYTES * STRIPES_PER_BLOCK;
    private static final int MIDSIZE_START_OFFSET = 3;
    private static final int MIDSIZE_LAST_OFFSET = 17;
    private static final int SECRET_SIZE_MIN = 136;
    private static final int LAST_STRIPE_SECRET_OFFSET = 7;
    private static final int MERGE_SECRET_OFFSET = 11;

    /** The default secret (192 bytes). */
    private static final byte[] SECRET = bytes(
        0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
        0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
        0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
        0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
        0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
        0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
        0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
        0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
        0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
        0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
        0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
        0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e);

    private final long[] acc = new long[8];
    private long low;
    private long high;

    /**
     * Hash {@code input[offset, offset + length)} and write the 16-byte canonical digest at {@code out[outOffset]}.
     *
     * @param input the bytes.
     * @param offset where they start.
     * @param length how many.
     * @param out where the digest goes.
     * @param outOffset where in {@code out}.
     */
    void digest(final byte[] input, final int offset, final int length, final byte[] out, final int outOffset)
    {
        if (length <= 16)
        {
            upTo16(input, offset, length);
        }
        else if (length <= 128)
        {
            upTo128(input, offset, length);
        }
        else if (length <= 240)
        {
            upTo240(input, offset, length);
        }
        else
        {
            longInput(input, offset, length);
        }
        BE64.set(out, outOffset, high);
        BE64.set(out, outOffset + 8, low);
    }

    private void upTo16(final byte[] in, final int off, final int len)
    {
        if (len > 8)
        {
            final long bitflipLow = le64(SECRET, 32) ^ le64(SECRET, 40);
            final long bitflipHigh = le64(SECRET, 48) ^ le64(SECRET, 56);
            final long inputLow = le64(in, off);
            long inputHigh = le64(in, off + len - 8);
            final long key = inputLow ^ inputHigh ^ bitflipLow;
            long mLow = key * PRIME64_1;
            long mHigh = multiplyHighUnsigned(key, PRIME64_1);
            mLow += (long)(len - 1) << 54;
            inputHigh ^= bitflipHigh;
            mHigh += inputHigh + (inputHigh & 0xFFFFFFFFL) * (PRIME32_2 - 1);
            mLow ^= Long.reverseBytes(mHigh);
            final long hLow = mLow * PRIME64_2;
            final long hHigh = multiplyHighUnsigned(mLow, PRIME64_2) + mHigh * PRIME64_2;
            low = avalanche(hLow);
            high = avalanche(hHigh);
        }
        else if (len >= 4)
        {
            final long inputLow = le32(in, off);
            final long inputHigh = le32(in, off + len - 4);
            final long input64 = inputLow + (inputHigh << 32);
            final long keyed = input64 ^ (le64(SECRET, 16) ^ le64(SECRET, 24));
            final long multiplier = PRIME64_1 + ((long)len << 2);
            long mLow = keyed * multiplier;
            long mHigh = multiplyHighUnsigned(keyed, multiplier);
            mHigh += mLow << 1;
            mLow ^= mHigh >>> 3;
            mLow ^= mLow >>> 35;
            mLow *= PRIME_MX2;
            mLow ^= mLow >>> 28;
            low = mLow;
            high = avalanche(mHigh);
        }
        else if (len > 0)
        {
            final int c1 = in[off] & 0xff;
            final int c2 = in[off + (len >> 1)] & 0xff;
            final int c3 = in[off + len - 1] & 0xff;
            final int combinedLow = (c1 << 16) | (c2 << 24) | c3 | (len << 8);
            final int combinedHigh = Integer.rotateLeft(Integer.reverseBytes(combinedLow), 13);
            final long bitflipLow = le32(SECRET, 0) ^ le32(SECRET, 4);
            final long bitflipHigh = le32(SECRET, 8) ^ le32(SECRET, 12);
            low = xxh64Avalanche((combinedLow & 0xFFFFFFFFL) ^ bitflipLow);
            high = xxh64Avalanche((combinedHigh & 0xFFFFFFFFL) ^ bitflipHigh);
        }
        else
        {
            low = xxh64Avalanche(le64(SECRET, 64) ^ le64(SECRET, 72));
            high = xxh64Avalanche(le64(SECRET, 80) ^ le64(SECRET, 88));
        }
    }

    private void upTo128(final byte[] in, final int off, final int len)
    {
        low = len * PRIME64_1;
        high = 0;
        if (len > 32)
        {
            if (len > 64)
            {
                if (len > 96)
                {
                    mix32(in, off + 48, off + len - 64, 96);
                }
                mix32(in, off + 32, off + len - 48, 64);
            }
            mix32(in, off + 16, off + len - 32, 32);
        }
        mix32(in, off, off + len - 16, 0);
        finishMidsize(len);
    }

    private void upTo240(final byte[] in, final int off, final int len)
    {
        low = len * PRIME64_1;
        high = 0;
        for (int i = 32; i < 160; i += 32)
        {
            mix32(in, off + i - 32, off + i - 16, i - 32);
        }
        low = avalanche(low);
        high = avalanche(high);
        for (int i = 160; i <= len; i += 32)
        {
            mix32(in, off + i - 32, off + i - 16, MIDSIZE_START_OFFSET + i - 160);
        }
        mix32(in, off + len - 16, off + len - 32, SECRET_SIZE_MIN - MIDSIZE_LAST_OFFSET - 16);
        finishMidsize(len);
    }

    private void finishMidsize(final int len)
    {
        final long sum = low + high;
        final long mixed = low * PRIME64_1 + high * PRIME64_4 + len * PRIME64_2;
        low = avalanche(sum);
        high = -avalanche(mixed);
    }

    private void mix32(final byte[] in, final int first, final int second, final int secretOffset)
    {
        low += mix16(in, first, secretOffset);
        low ^= le64(in, second) + le64(in, second + 8);
        high += mix16(in, second, secretOffset + 16);
        high ^= le64(in, first) + le64(in, first + 8);
    }

    private static long mix16(final byte[] in, final int at, final int secretOffset)
    {
        return fold64(le64(in, at) ^ le64(SECRET, secretOffset), le64(in, at + 8) ^ le64(SECRET, secretOffset + 8));
    }

    private void longInput(final byte[] in, final int off, final int len)
    {
        final long[] a = acc;
        a[0] = PRIME32_3;
        a[1] = PRIME64_1;
        a[2] = PRIME64_2;
        a[3] = PRIME64_3;
        a[4] = PRIME64_4;
        a[5] = PRIME32_2;
        a[6] = PRIME64_5;
        a[7] = PRIME32_1;
        final int blocks = (len - 1) / BLOCK_BYTES;
        for (int n = 0; n < blocks; n++)
        {
            accumulate(in, off + n * BLOCK_BYTES, STRIPES_PER_BLOCK);
            scramble(SECRET_BYTES - STRIPE_BYTES);
        }
        final int stripes = ((len - 1) - BLOCK_BYTES * blocks) / STRIPE_BYTES;
        accumulate(in, off + blocks * BLOCK_BYTES, stripes);
        accumulateStripe(in, off + len - STRIPE_BYTES, SECRET_BYTES - STRIPE_BYTES - LAST_STRIPE_SECRET_OFFSET);
        low = mergeAccumulators(MERGE_SECRET_OFFSET, len * PRIME64_1);
        high = mergeAccumulators(SECRET_BYTES - 64 - MERGE_SECRET_OFFSET, ~(len * PRIME64_2));
    }

    private void accumulate(final byte[] in, final int at, final int stripes)
    {
        for (int n = 0; n < stripes; n++)
        {
            accumulateStripe(in, at + n * STRIPE_BYTES, n * 8);
        }
    }

    private void accumulateStripe(final byte[] in, final int at, final int secretOffset)
    {
        final long[] a = acc;
        for (int lane = 0; lane < 8; lane++)
        {
            final long value = le64(in, at + lane * 8);
            final long key = value ^ le64(SECRET, secretOffset + lane * 8);
            a[lane ^ 1] += value;
            a[lane] += (key & 0xFFFFFFFFL) * (key >>> 32);
        }
    }

    private void scramble(final int secretOffset)
    {
        final long[] a = acc;
        for (int lane = 0; lane < 8; lane++)
        {
            long value = a[lane];
            value ^= value >>> 47;
            value ^= le64(SECRET, secretOffset + lane * 8);
            a[lane] = value * PRIME32_1;
        }
    }

    private long mergeAccumulators(final int secretOffset, final long start)
    {
        long result = start;
        for (int i = 0; i < 4; i++)
        {
            result += fold64(acc[2 * i] ^ le64(SECRET, secretOffset + 16 * i),
                acc[2 * i + 1] ^ le64(SECRET, secretOffset + 16 * i + 8));
        }
        return avalanche(result);
    }

    /** The 128-bit product of two unsigned 64-bit values, its halves xored. */
    private static long fold64(final long a, final long b)
    {
        return (a * b) ^ multiplyHighUnsigned(a, b);
    }

    /** The high 64 bits of the unsigned 128-bit product (Java 17 has only the signed {@link Math#multiplyHigh}). */
    private static long multiplyHighUnsigned(final long a, final long b)
    {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }

    private static long avalanche(final long value)
    {
        long h = value;
        h ^= h >>> 37;
        h *= PRIME_MX1;
        return h ^ (h >>> 32);
    }

    private static long xxh64Avalanche(final long value)
    {
        long h = value;
        h ^= h >>> 33;
        h *= PRIME64_2;
        h ^= h >>> 29;
        h *= PRIME64_3;
        return h ^ (h >>> 32);
    }

    private static long le64(final byte[] bytes, final int at)
    {
        return (long)LE64.get(bytes, at);
    }

    private static long le32(final byte[] bytes, final int at)
    {
        return (int)LE32.get(bytes, at) & 0xFFFFFFFFL;
    }

    private static byte[] bytes(final int... values)
    {
        final byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++)
        {
            out[i] = (byte)values[i];
        }
        return out;
    }
}
