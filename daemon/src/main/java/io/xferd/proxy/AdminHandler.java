package io.xferd.proxy;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;

/**
 * The admin endpoint, on its own address (loopback or a management network, never the public one):
 * <ul>
 *   <li>{@code GET /backends}: every backend, its health and load;</li>
 *   <li>{@code POST /backends?role=prefill|decode&url=http://host:port}: add one (201; 200 if already there);</li>
 *   <li>{@code DELETE /backends?role=...&url=...}: remove one (requests on it run to their end; 404 if unknown);</li>
 *   <li>{@code POST /reload}: read the config file again.</li>
 * </ul>
 */
final class AdminHandler
{
    private final ProxyServer proxy;

    AdminHandler(final ProxyServer proxy)
    {
        this.proxy = proxy;
    }

    void handle(final HttpServerRequest request)
    {
        try
        {
            if ("/backends".equals(request.path()))
            {
                backends(request);
            }
            else if ("/reload".equals(request.path()) && request.method() == HttpMethod.POST)
            {
                proxy.reload();
                answer(request, 200, proxy.backends().describe().toString());
            }
            else
            {
                error(request, 404, "no admin route for " + request.method() + " " + request.path());
            }
        }
        catch (final IllegalArgumentException | IllegalStateException | java.io.IOException ex)
        {
            error(request, 400, ex.getMessage());
        }
    }

    private void backends(final HttpServerRequest request)
    {
        final HttpMethod method = request.method();
        if (method == HttpMethod.GET)
        {
            answer(request, 200, proxy.backends().describe().toString());
            return;
        }
        final String url = request.getParam("url");
        if (url == null)
        {
            error(request, 400, "url= is required");
            return;
        }
        final BackendRole role = BackendRole.parse(request.getParam("role"));
        if (method == HttpMethod.POST)
        {
            final boolean existed = proxy.backends().pool(role).find(BackendAddress.parse(url).url()) != null;
            proxy.backends().add(role, url, BackendSource.ADMIN);
            proxy.probeNow();
            answer(request, existed ? 200 : 201, proxy.backends().describe().toString());
        }
        else if (method == HttpMethod.DELETE)
        {
            if (proxy.backends().remove(role, url) == null)
            {
                error(request, 404, "no " + role.label() + " backend at " + url);
            }
            else
            {
                answer(request, 200, proxy.backends().describe().toString());
            }
        }
        else
        {
            error(request, 405, "use GET, POST or DELETE on /backends");
        }
    }

    private static void answer(final HttpServerRequest request, final int status, final String body)
    {
        request.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body);
    }

    private void error(final HttpServerRequest request, final int status, final String message)
    {
        request.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
            .end(OpenAiErrors.body(proxy.json(), status, message));
    }
}
