package dev.tapedeck.trace;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The optional first line of a trace, {@code {"meta": {...}}}: where and how it was captured. Every field is optional
 * (null when absent); unknown keys are kept in {@link #extra()} and written back. Mutable; not thread safe.
 */
public final class TraceMeta
{
    private String model;
    private String gpu;
    private Long tp;
    private Long maxNumSeqs;
    private String source;
    private Long blockSize;
    private String configHash;
    private String vllmVersion;
    private String readyResponseHex;
    private final Map<String, JsonNode> extra = new LinkedHashMap<>();

    /**
     * @return true when no field is set (the trace has no meta line).
     */
    public boolean isEmpty()
    {
        return null == model && null == gpu && null == tp && null == maxNumSeqs && null == source &&
            null == blockSize && null == configHash && null == vllmVersion && null == readyResponseHex &&
            extra.isEmpty();
    }

    /**
     * @return model id, or null.
     */
    public String model()
    {
        return model;
    }

    /**
     * @param value model id.
     * @return this.
     */
    public TraceMeta model(final String value)
    {
        model = value;
        return this;
    }

    /**
     * @return GPU name such as {@code H200}, or null.
     */
    public String gpu()
    {
        return gpu;
    }

    /**
     * @param value GPU name.
     * @return this.
     */
    public TraceMeta gpu(final String value)
    {
        gpu = value;
        return this;
    }

    /**
     * @return tensor-parallel size, or null.
     */
    public Long tp()
    {
        return tp;
    }

    /**
     * @param value tensor-parallel size.
     * @return this.
     */
    public TraceMeta tp(final Long value)
    {
        tp = value;
        return this;
    }

    /**
     * @return the capture's scheduler cap, or null.
     */
    public Long maxNumSeqs()
    {
        return maxNumSeqs;
    }

    /**
     * @param value the capture's scheduler cap.
     * @return this.
     */
    public TraceMeta maxNumSeqs(final Long value)
    {
        maxNumSeqs = value;
        return this;
    }

    /**
     * @return how the trace was made ({@code tap}, {@code guidellm}, {@code gen-demo}, {@code tapedeck-serve}, ...).
     */
    public String source()
    {
        return source;
    }

    /**
     * @param value how the trace was made.
     * @return this.
     */
    public TraceMeta source(final String value)
    {
        source = value;
        return this;
    }

    /**
     * @return the token block size behind {@code block_hashes}, or null.
     */
    public Long blockSize()
    {
        return blockSize;
    }

    /**
     * @param value token block size.
     * @return this.
     */
    public TraceMeta blockSize(final Long value)
    {
        blockSize = value;
        return this;
    }

    /**
     * @return the 64-hex configuration fingerprint ({@link ConfigFingerprint}), or null.
     */
    public String configHash()
    {
        return configHash;
    }

    /**
     * @param value configuration fingerprint.
     * @return this.
     */
    public TraceMeta configHash(final String value)
    {
        configHash = value;
        return this;
    }

    /**
     * @return the engine-reported vLLM version, or null.
     */
    public String vllmVersion()
    {
        return vllmVersion;
    }

    /**
     * @param value the engine-reported vLLM version.
     * @return this.
     */
    public TraceMeta vllmVersion(final String value)
    {
        vllmVersion = value;
        return this;
    }

    /**
     * @return lowercase hex of the engine's raw registration payload, or null.
     */
    public String readyResponseHex()
    {
        return readyResponseHex;
    }

    /**
     * @param value lowercase hex of the registration payload.
     * @return this.
     */
    public TraceMeta readyResponseHex(final String value)
    {
        readyResponseHex = value;
        return this;
    }

    /**
     * @return keys this schema does not know, in file order; mutable.
     */
    public Map<String, JsonNode> extra()
    {
        return extra;
    }
}
