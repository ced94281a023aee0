package io.xferd.daemon;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A tiny TCP echo for the network namespace tests, run in a child JVM inside a namespace.
 * <ul>
 *   <li>{@code server ADDRESS PORT}: prints {@code LISTENING}, then echoes every connection's bytes back.</li>
 *   <li>{@code client ADDRESS PORT MESSAGE TIMEOUT_MS}: sends the message, prints {@code ECHO <answer>} and exits
 *   0, or prints {@code FAILED <why>} and exits 1 when the connection is not made or answered in time.</li>
 * </ul>
 */
public final class EchoMain
{
    private EchoMain()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        final InetAddress address = InetAddress.getByName(args[1]);
        final int port = Integer.parseInt(args[2]);
        if ("server".equals(args[0]))
        {
            serve(new InetSocketAddress(address, port));
        }
        else
        {
            System.exit(ask(new InetSocketAddress(address, port), args[3], Integer.parseInt(args[4])));
        }
    }

    private static void serve(final InetSocketAddress address) throws IOException
    {
        try (ServerSocket server = new ServerSocket())
        {
            server.setReuseAddress(true);
            server.bind(address);
            System.out.println("LISTENING " + address);
            System.out.flush();
            while (true)
            {
                final Socket socket = server.accept();
                Thread.ofPlatform().daemon().start(() -> echo(socket));
            }
        }
    }

    private static void echo(final Socket socket)
    {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream())
        {
            final byte[] buffer = new byte[4096];
            int read;
            while ((read = in.read(buffer)) >= 0)
            {
                out.write(buffer, 0, read);
                out.flush();
            }
        }
        catch (final IOException ignore)
        {
            // the client went away
        }
    }

    private static int ask(final InetSocketAddress address, final String message, final int timeoutMs)
    {
        try (Socket socket = new Socket())
        {
            socket.connect(address, timeoutMs);
            socket.setSoTimeout(timeoutMs);
            final byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            final byte[] answer = new byte[bytes.length];
            new DataInputStream(socket.getInputStream()).readFully(answer);
            System.out.println("ECHO " + new String(answer, StandardCharsets.UTF_8));
            return 0;
        }
        catch (final IOException ex)
        {
            System.out.println("FAILED " + ex);
            return 1;
        }
    }
}
