"""A drop-in for Mooncake's transfer engine Python package, served by the local xferd daemon.

``from mooncake.engine import TransferEngine`` gives :class:`mooncake.engine.TransferEngine`, which vLLM's
``MooncakeConnector`` and SGLang's Mooncake disaggregation backend use unmodified. Only the transfer engine is
provided: Mooncake Store (``mooncake.store``) and SGLang's ``mooncake.allocator`` are other products.
"""

__all__ = ["engine"]
__xferd__ = True
