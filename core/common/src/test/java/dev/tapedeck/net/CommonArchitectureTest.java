package dev.tapedeck.net;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The common module's package rule: its packages are independent of each other, so a product takes what it needs.
 */
class CommonArchitectureTest
{
    private static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.tapedeck.tokens", "dev.tapedeck.net", "dev.tapedeck.time", "dev.tapedeck.build");

    @Test
    void eachPackageStandsAlone()
    {
        for (final String pkg : new String[] {"tokens", "net", "time", "build"})
        {
            final String self = "dev.tapedeck." + pkg;
            noClasses().that().resideInAPackage(self)
                .should().dependOnClassesThat().resideInAnyPackage(others(self))
                .check(MAIN);
        }
    }

    private static String[] others(final String self)
    {
        return java.util.stream.Stream.of("dev.tapedeck.tokens", "dev.tapedeck.net", "dev.tapedeck.time",
            "dev.tapedeck.build").filter(p -> !p.equals(self)).toArray(String[]::new);
    }
}
