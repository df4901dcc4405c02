package dev.tapedeck.serve;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The serve module's package rules: the HTTP face knows nothing of the API that assembles it, and reads time only
 * through the clock its settings carry.
 */
class ServeArchitectureTest
{
    private static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.tapedeck.http", "dev.tapedeck.serve");

    @Test
    void theFaceDoesNotDependOnTheApiAboveIt()
    {
        noClasses().that().resideInAPackage("dev.tapedeck.http")
            .should().dependOnClassesThat().resideInAPackage("dev.tapedeck.serve")
            .check(MAIN);
    }

    @Test
    void theFaceReadsTimeOnlyThroughItsContextsClock()
    {
        noClasses().that().resideInAPackage("dev.tapedeck.http")
            .should().callMethod(System.class, "nanoTime")
            .orShould().callMethod(System.class, "currentTimeMillis")
            .because("ServeOptions carries the one clock of a serve context (a test gives it a manual one)")
            .check(MAIN);
    }
}
