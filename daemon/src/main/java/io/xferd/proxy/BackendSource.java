package io.xferd.proxy;

/**
 * Who added a backend, which says who may take it away: a config reload adds and removes only {@link #FILE}
 * backends; the admin endpoint may remove any.
 */
public enum BackendSource
{
    COMMAND_LINE, FILE, ADMIN
}
