package dev.tapedeck.engine;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The package rules of the engine module that Maven cannot express (module direction is Maven's job): the engine
 * knows its faces and its event consumers only through the interfaces it defines, the value packages below it know
 * nothing above them, and the engine never reads a clock.
 */
class EngineArchitectureTest
{
    private static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.tapedeck.engine", "dev.tapedeck.kv", "dev.tapedeck.lora", "dev.tapedeck.metrics",
            "dev.tapedeck.kvevents", "dev.tapedeck.capture", "dev.tapedeck.kvtransfer");

    @Test
    void theEngineSeesKvEventsAndCaptureOnlyThroughItsOwnInterfaces()
    {
        noClasses().that().resideInAPackage("dev.tapedeck.engine")
            .should().dependOnClassesThat().resideInAnyPackage("dev.tapedeck.kvevents", "dev.tapedeck.capture")
            .because("the engine publishes through KvEventSink and RequestObserver, whoever implements them")
            .check(MAIN);
    }

    @Test
    void theEngineSeesKvTransferOnlyThroughItsKvConnector()
    {
        noClasses().that().resideInAnyPackage("dev.tapedeck.engine", "dev.tapedeck.kv", "dev.tapedeck.lora",
                "dev.tapedeck.metrics")
            .should().dependOnClassesThat().resideInAnyPackage("dev.tapedeck.kvtransfer", "dev.tapedeck.nixl..")
            .because("P/D disaggregation plugs into the engine through KvConnector; the data planes and the side " +
                "channel stay behind it")
            .check(MAIN);
    }

    @Test
    void theValuePackagesDependOnNothingAboveThem()
    {
        noClasses().that().resideInAnyPackage("dev.tapedeck.kv", "dev.tapedeck.lora", "dev.tapedeck.metrics")
            .should().dependOnClassesThat().resideInAnyPackage("dev.tapedeck.engine", "dev.tapedeck.kvevents",
                "dev.tapedeck.capture")
            .check(MAIN);
    }

    @Test
    void theEngineNeverReadsAClock()
    {
        noClasses().that().resideInAnyPackage("dev.tapedeck.engine", "dev.tapedeck.kv", "dev.tapedeck.lora",
            "dev.tapedeck.metrics")
            .should().callMethod(System.class, "nanoTime")
            .orShould().callMethod(System.class, "currentTimeMillis")
            .orShould().callMethod(java.time.Instant.class, "now")
            .orShould().dependOnClassesThat().haveNameMatching("org\\.agrona\\.concurrent\\.System.*Clock")
            .because("time is given to the engine (doWork(nowNs), submit(request, nowNs)), so one engine runs in " +
                "real time behind serve and play and in virtual time in a simulation")
            .check(MAIN);
    }
}
