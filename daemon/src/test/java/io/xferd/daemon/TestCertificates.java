package io.xferd.daemon;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway PKI for TLS tests, made by {@code openssl} in a directory of the test's: a CA, a server certificate
 * for {@code 127.0.0.1} and {@code localhost} and a client certificate, both signed by that CA, and a second CA that
 * signed nothing here (what a client trusting the wrong CA holds). EC P-256 keys, PKCS#8 PEM, valid two days.
 * Skipped without openssl, except in CI, where it fails ({@link MetadataServers#assumeInstalled}).
 *
 * @param ca         the CA certificate both certificates chain to.
 * @param otherCa    a CA that signed neither certificate.
 */
record TestCertificates(Path ca, Path otherCa, Path serverCert, Path serverKey, Path clientCert, Path clientKey)
{
    private static final String CURVE = "ec_paramgen_curve:prime256v1";

    static TestCertificates create(final Path dir)
    {
        MetadataServers.assumeInstalled("openssl");
        final TestCertificates certificates = new TestCertificates(dir.resolve("ca.pem"), dir.resolve("other-ca.pem"),
            dir.resolve("server.pem"), dir.resolve("server.key"), dir.resolve("client.pem"), dir.resolve("client.key"));
        selfSigned(dir, "ca", "xferd test CA");
        selfSigned(dir, "other-ca", "xferd untrusted CA");
        signed(dir, "server", "127.0.0.1",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n");
        signed(dir, "client", "xferd client", "extendedKeyUsage=clientAuth\n");
        return certificates;
    }

    private static void selfSigned(final Path dir, final String name, final String commonName)
    {
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", CURVE, "-nodes", "-days", "2",
            "-keyout", name + ".key", "-out", name + ".pem", "-subj", "/CN=" + commonName,
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    }

    private static void signed(final Path dir, final String name, final String commonName, final String extensions)
    {
        try
        {
            Files.writeString(dir.resolve(name + ".ext"), extensions, StandardCharsets.US_ASCII);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", CURVE, "-nodes", "-keyout", name + ".key",
            "-out", name + ".csr", "-subj", "/CN=" + commonName);
        openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-set_serial", Long.toString(System.nanoTime() & Long.MAX_VALUE), "-days", "2",
            "-extfile", name + ".ext", "-out", name + ".pem");
    }

    private static void openssl(final Path dir, final String... arguments)
    {
        final List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        try
        {
            final Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0)
            {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
