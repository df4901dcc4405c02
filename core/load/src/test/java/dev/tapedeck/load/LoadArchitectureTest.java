package dev.tapedeck.load;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The load module's package rule: the HTTP client knows nothing of plans, runs and reports (it sends exchanges and
 * tells a listener what happened), so it can serve other drivers.
 */
class LoadArchitectureTest
{
    private static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.tapedeck.load");

    @Test
    void theClientDoesNotDependOnTheRunAboveIt()
    {
        noClasses().that().resideInAPackage("dev.tapedeck.load.client")
            .should().dependOnClassesThat().resideInAPackage("dev.tapedeck.load")
            .check(MAIN);
    }
}
