package io.xferd.daemon.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How a daemon authenticates to an etcd or redis metadata store and whether it speaks TLS to it: a user name and a
 * file holding the password ({@code metadata_username}, {@code metadata_password_file}), a CA file to trust
 * ({@code metadata_tls_ca_file}: TLS on) and a client certificate with its key for mutual TLS
 * ({@code metadata_tls_cert_file}, {@code metadata_tls_key_file}, PEM). Every field is optional; the password is
 * read from its file when the store is opened, never kept in the config or printed.
 */
public record MetadataAccess(String username, Path passwordFile, Path tlsCaFile, Path tlsCertFile, Path tlsKeyFile)
{
    public static final MetadataAccess NONE = new MetadataAccess(null, null, null, null, null);

    public MetadataAccess username(final String value)
    {
        return new MetadataAccess(value, passwordFile, tlsCaFile, tlsCertFile, tlsKeyFile);
    }

    public MetadataAccess passwordFile(final Path value)
    {
        return new MetadataAccess(username, value, tlsCaFile, tlsCertFile, tlsKeyFile);
    }

    public MetadataAccess tlsCaFile(final Path value)
    {
        return new MetadataAccess(username, passwordFile, value, tlsCertFile, tlsKeyFile);
    }

    public MetadataAccess tlsCertFile(final Path value)
    {
        return new MetadataAccess(username, passwordFile, tlsCaFile, value, tlsKeyFile);
    }

    public MetadataAccess tlsKeyFile(final Path value)
    {
        return new MetadataAccess(username, passwordFile, tlsCaFile, tlsCertFile, value);
    }

    /**
     * @return whether the store is reached over TLS (a CA file is given).
     */
    public boolean tls()
    {
        return tlsCaFile != null;
    }

    public boolean isNone()
    {
        return equals(NONE);
    }

    /**
     * @throws ConfigException for a client certificate without its key (or the reverse), or one without a CA.
     */
    public MetadataAccess validate()
    {
        if ((tlsCertFile == null) != (tlsKeyFile == null))
        {
            throw new ConfigException("metadata_tls_cert_file and metadata_tls_key_file go together (mutual TLS)");
        }
        if (tlsCertFile != null && tlsCaFile == null)
        {
            throw new ConfigException("metadata_tls_cert_file needs metadata_tls_ca_file (the CA to trust)");
        }
        return this;
    }

    /**
     * @return the password, the file's content without its trailing newline, or null without a password file.
     * @throws ConfigException when the file cannot be read or is empty.
     */
    public String password()
    {
        if (passwordFile == null)
        {
            return null;
        }
        try
        {
            final String password = Files.readString(passwordFile).strip();
            if (password.isEmpty())
            {
                throw new ConfigException("metadata_password_file " + passwordFile + " is empty");
            }
            return password;
        }
        catch (final IOException ex)
        {
            throw new ConfigException("cannot read metadata_password_file " + passwordFile + ": " + ex);
        }
    }

    /**
     * @return the settings for {@code xferd status} and the start-up log line: paths, never the password.
     */
    public Map<String, Object> describe()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        if (username != null)
        {
            map.put("metadata_username", username);
        }
        if (passwordFile != null)
        {
            map.put("metadata_password_file", passwordFile.toString());
        }
        if (tlsCaFile != null)
        {
            map.put("metadata_tls_ca_file", tlsCaFile.toString());
        }
        if (tlsCertFile != null)
        {
            map.put("metadata_tls_cert_file", tlsCertFile.toString());
            map.put("metadata_tls_key_file", tlsKeyFile.toString());
        }
        return map;
    }
}
