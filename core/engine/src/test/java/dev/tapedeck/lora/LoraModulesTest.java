package dev.tapedeck.lora;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --lora-modules} in both of vLLM's forms, the errors for what is neither, and the adapter table: ids in load
 * order, runtime loads after the highest id without reuse, unloads, and the engine side's registration by id.
 */
class LoraModulesTest
{
    private static final List<String> BASE = List.of("Qwen/Qwen3-8B");

    @Test
    void shouldReadNamePathAndJsonFormsAndNumberThemInOrder()
    {
        final List<LoraAdapter> adapters = LoraModules.parse(List.of("sql=/adapters/sql",
            "{\"name\":\"chat\",\"path\":\"/adapters/chat\",\"base_model_name\":\"Qwen/Qwen3-8B\"}",
            " tools=s3://bucket/a=b "), BASE);
        assertEquals(3, adapters.size());
        assertEquals("sql", adapters.get(0).name());
        assertEquals(1, adapters.get(0).id());
        assertEquals("/adapters/sql", adapters.get(0).path());
        assertNull(adapters.get(0).baseModelName());
        assertEquals("chat", adapters.get(1).name());
        assertEquals(2, adapters.get(1).id());
        assertEquals("Qwen/Qwen3-8B", adapters.get(1).baseModelName());
        assertEquals("tools", adapters.get(2).name());
        assertEquals("s3://bucket/a=b", adapters.get(2).path(), "split at the first '='");
        assertArrayEquals("sql".getBytes(java.nio.charset.StandardCharsets.UTF_8), adapters.get(0).nameUtf8());
    }

    @Test
    void shouldRejectWhatIsNeitherFormWithTheValue()
    {
        assertMessage("--lora-modules: 'nopath' is neither NAME=PATH nor a JSON object", "nopath");
        assertMessage("--lora-modules: '=/p' is neither NAME=PATH", "=/p");
        assertMessage("--lora-modules: '{\"name\":\"x\"' is not valid JSON", "{\"name\":\"x\"");
        assertMessage("--lora-modules: '{\"name\":\"x\"}' needs \"name\" and \"path\"", "{\"name\":\"x\"}");
        assertMessage("\"path\" must be a non-empty string", "{\"name\":\"x\",\"path\":3}");
        final IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
            () -> LoraModules.parse(List.of("a=/1", "a=/2"), BASE));
        assertEquals("--lora-modules: the adapter name 'a' is given twice", twice.getMessage());
        final IllegalArgumentException base = assertThrows(IllegalArgumentException.class,
            () -> LoraModules.parse(List.of("Qwen/Qwen3-8B=/1"), BASE));
        assertTrue(base.getMessage().contains("already a served model name"), base.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new LoraSettings(false, LoraModules.parse(
            List.of("a=/1"), BASE), 16, 0), "modules without --enable-lora");
    }

    private static void assertMessage(final String expected, final String value)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> LoraModules.parse(List.of(value), BASE));
        assertTrue(ex.getMessage().startsWith(expected) || ex.getMessage().contains(expected), ex.getMessage());
    }

    @Test
    void shouldLoadAfterTheHighestIdAndNeverReuseOne()
    {
        final LoraTable table = new LoraTable(LoraModules.parse(List.of("a=/a", "b=/b"), BASE));
        assertEquals(2, table.byName("b").id());
        assertSame(table.byName("a"), table.byId(1));
        final LoraAdapter c = table.load("c", "/c");
        assertEquals(3, c.id());
        assertThrows(IllegalStateException.class, () -> table.load("a", "/other"));
        assertEquals(c, table.unload("c"));
        assertNull(table.unload("c"));
        assertNull(table.byId(3));
        assertEquals(4, table.load("d", "/d").id(), "3 is not given again");
        assertArrayEquals(new int[] {1, 2, 4}, table.ids());
        assertEquals(List.of("a", "b", "d"), table.adapters().stream().map(LoraAdapter::name).toList());
    }

    @Test
    void shouldRegisterTheIdsAFrontendChose()
    {
        final LoraTable engine = new LoraTable(List.of());
        final LoraAdapter sql = engine.resolve(7, "sql", null);
        assertSame(sql, engine.resolve(7, "sql", null), "one adapter object per id and name");
        assertEquals("", sql.path());
        final LoraAdapter renamed = engine.resolve(7, "sql-v2", "/v2");
        assertEquals("sql-v2", renamed.name());
        assertNull(engine.byName("sql"), "the id now names the new adapter");
        assertTrue(engine.remove(7));
        assertFalse(engine.remove(7));
        assertArrayEquals(new int[0], engine.ids());
        assertThrows(IllegalArgumentException.class, () -> new LoraAdapter("x", 0, "", null));
    }
}
