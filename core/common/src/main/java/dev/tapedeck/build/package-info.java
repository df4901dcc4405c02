/**
 * tapedeck's build information: {@link TapedeckVersion} reads the version the build wrote into
 * {@code dev/tapedeck/version.properties} ("dev" when run from classes without a build), for {@code --version} and the
 * meta line of a self-captured trace.
 * <p>
 * Depends on nothing else of tapedeck (the common module depends on no other, and {@code CommonArchitectureTest} keeps
 * its packages apart).
 * <p>
 * <b>Threading</b>: stateless; any thread.
 */
package dev.tapedeck.build;
