/**
 * How the daemon's files are made: explicit modes whatever the umask. Depends on nothing else of the daemon, so the
 * control plane, the registry and the journal can all use it without a package cycle.
 */
package io.xferd.daemon.files;
