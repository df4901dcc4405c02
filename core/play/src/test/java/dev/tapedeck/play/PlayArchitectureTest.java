package dev.tapedeck.play;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The play module's package rule: the engine-core face knows nothing of the API that assembles it.
 */
class PlayArchitectureTest
{
    private static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.tapedeck.enginecore", "dev.tapedeck.play");

    @Test
    void theFaceDoesNotDependOnTheApiAboveIt()
    {
        noClasses().that().resideInAPackage("dev.tapedeck.enginecore")
            .should().dependOnClassesThat().resideInAPackage("dev.tapedeck.play")
            .check(MAIN);
    }
}
