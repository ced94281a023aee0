"""``python3 -m xferd_demo prefill|decode``: run one stand-in vLLM instance until SIGTERM or SIGINT.

Prints ``READY <role> http://host:port`` on stdout once it serves (the port is chosen by the system when
``--port 0``). Needs a running xferd daemon (``XFERD_DIR``) and ``PYTHONPATH`` naming the repository's ``python``
folder.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from types import FrameType

from xferd_demo.kv import KvShape
from xferd_demo.server import DemoServer, Instance


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python3 -m xferd_demo", description=__doc__)
    parser.add_argument("role", choices=("prefill", "decode"))
    parser.add_argument("--host", default="127.0.0.1", help="the xferd daemon's RPC host, also this server's")
    parser.add_argument("--port", type=int, default=0, help="OpenAI port (0: any free port)")
    parser.add_argument("--num-blocks", type=int, default=256,
                        help="KV cache blocks per layer (16 tokens each; 28 layers x K and V of 16 KiB a block)")
    parser.add_argument("--layers", type=int, default=KvShape.layers, help="model layers (Qwen2.5-7B: 28)")
    parser.add_argument("--model", default="Qwen/Qwen2.5-7B-Instruct", help="model name reported")
    parser.add_argument("--corrupt-first", action="store_true",
                        help="prefill: flip one KV byte of the first request (fault injection)")
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    """Serve until a signal; 0 on a clean stop."""
    args = parse(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format=f"{args.role} %(levelname)s %(name)s: %(message)s")
    instance = Instance.create(args.role, args.host, KvShape(layers=args.layers), args.num_blocks, args.model)
    instance.corrupt_next = args.corrupt_first
    server = DemoServer((args.host, args.port), instance)
    instance.side_port = server.server_address[1]  # the side channel shares the OpenAI port (path /kv/send)
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"READY {args.role} http://{args.host}:{server.server_address[1]} engine {args.host}:"
          f"{instance.engine.get_rpc_port()} kv {instance.cache.total_bytes}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        instance.engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
