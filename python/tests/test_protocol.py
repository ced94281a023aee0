"""Frame and record codecs against the byte offsets of protocol version 2 (no daemon)."""

from __future__ import annotations

import support  # noqa: F401  (puts python/ on the path)
import struct
import unittest

from xferd import errors
from xferd import protocol as p


def body(frame: bytes) -> bytes:
    length, _type = struct.unpack_from("<ii", frame, 0)
    assert length == len(frame)
    return frame[8:]


class ControlFrameTest(unittest.TestCase):
    def test_hello_carries_version_pid_flags_then_the_name_at_16(self) -> None:
        frame = p.encode_hello(4242, "decode-0", p.HELLO_FLAG_LISTEN)
        self.assertEqual((8 + 16 + 4 + 8, p.HELLO), struct.unpack_from("<ii", frame))
        self.assertEqual((2, 4242, 1, 0, 8), struct.unpack_from("<iiiii", body(frame)))
        self.assertEqual(b"decode-0", body(frame)[20:])

    def test_register_memory_layout(self) -> None:
        frame = p.encode_register_memory(7, 0x7f0000001000, 4096, 64, "cpu:0")
        self.assertEqual(p.REGISTER_MEMORY, struct.unpack_from("<i", frame, 4)[0])
        self.assertEqual((7, 0x7f0000001000, 4096, 64, 5), struct.unpack_from("<qqqqi", body(frame)))
        self.assertEqual(b"cpu:0", body(frame)[36:])

    def test_register_process_memory_is_type_6_with_the_location_at_24_and_nothing_after(self) -> None:
        frame = p.encode_register_process_memory(9, 0x1000, 8192, "*")
        self.assertEqual((8 + 24 + 4 + 1, 6), struct.unpack_from("<ii", frame))
        self.assertEqual((9, 0x1000, 8192, 1), struct.unpack_from("<qqqi", body(frame)))
        self.assertEqual(b"*", body(frame)[28:])

    def test_register_gpu_memory_layout(self) -> None:
        handle = bytes(range(64))
        frame = p.encode_register_gpu_memory(3, 0x7000, 1 << 20, 256, handle, "0000:1b:00.0", "cuda:1")
        data = body(frame)
        self.assertEqual((3, 0x7000, 1 << 20, 256), struct.unpack_from("<qqqq", data))
        self.assertEqual(handle, data[32:96])
        self.assertEqual(b"0000:1b:00.0\0\0\0\0", data[96:112])
        self.assertEqual((6,), struct.unpack_from("<i", data, 112))
        self.assertEqual(b"cuda:1", data[116:])
        with self.assertRaises(ValueError):
            p.encode_register_gpu_memory(3, 0, 1, 0, b"short", "", "cuda:0")

    def test_unregister_and_open_segment(self) -> None:
        self.assertEqual((5, 0xabc), struct.unpack_from("<qq", body(p.encode_unregister_memory(5, 0xabc))))
        frame = p.encode_open_segment(6, "127.0.0.1:15001")
        self.assertEqual((6, 15), struct.unpack_from("<qi", body(frame)))
        self.assertEqual(b"127.0.0.1:15001", body(frame)[12:])

    def test_strings_longer_than_1024_bytes_are_refused(self) -> None:
        with self.assertRaises(ValueError):
            p.encode_open_segment(1, "x" * 1025)

    def test_welcome_decodes_every_field_of_version_2(self) -> None:
        name = b"127.0.0.1:4000/prefill-0"
        data = struct.pack("<iiqqiiqiiii", 3, 64, 0, 0x55, 1 << 16, 256, 1 << 30, 1 << 20, 4096, 15123, 0) \
            + struct.pack("<i", len(name)) + name
        welcome = p.decode_welcome(struct.pack("<ii", 8 + len(data), p.WELCOME) + data)
        self.assertEqual(p.Welcome(3, 64, 0x55, 1 << 16, 256, 1 << 30, 1 << 20, 4096, 15123, 0, name.decode()),
                         welcome)

    def test_ok_and_error(self) -> None:
        ok = struct.pack("<iiqq", 24, p.OK, 11, 99)
        self.assertEqual((11, 99), p.decode_ok(ok))
        message = b"range overlaps"
        error = struct.pack("<iiqii", 8 + 16 + len(message), p.ERROR, 12, 4, len(message)) + message
        self.assertEqual((12, 4, "range overlaps"), p.decode_error(error))

    def test_short_or_impossible_frames_are_malformed(self) -> None:
        with self.assertRaises(p.MalformedFrame):
            p.decode_ok(struct.pack("<iiq", 16, p.OK, 1))
        with self.assertRaises(p.MalformedFrame):
            p.frame_header(struct.pack("<ii", 5000, p.OK))
        with self.assertRaises(p.MalformedFrame):
            p.read_string(struct.pack("<iii", 12, 1, 99), 0)


class RingRecordTest(unittest.TestCase):
    def test_submit_is_80_bytes_with_reserved_slot_and_token_zero(self) -> None:
        record = bytearray(b"\xff" * 90)
        p.pack_submit(record, 0, request_id=17, opcode=p.WRITE, segment=0x22, local_address=0x1000,
                      target_address=0x2000, length=64, trace_id=5, submit_nanos=123, notify=b"hi")
        self.assertEqual((0, 1, 0, 17, 0x22, 0x1000, 0x2000, 64, 5, 123, 2, 0),
                         struct.unpack_from("<iiqqqqqqqqii", record))
        self.assertEqual(b"hi", bytes(record[80:82]))
        self.assertEqual(82, p.submit_length(2))

    def test_submit_batch_header_padded_notify_then_24_byte_entries(self) -> None:
        self.assertEqual(48 + 8 + 24 * 3, p.batch_length(3, 5))
        record = bytearray(b"\xff" * p.batch_length(3, 5))
        at = p.pack_batch_header(record, 0, 9, p.READ, 3, 0x44, 7, 1000, b"hello")
        self.assertEqual(56, at)
        self.assertEqual((9, 0, 3, 0x44, 7, 1000, 5, 0), struct.unpack_from("<qiiqqqii", record))
        self.assertEqual(b"hello\0\0\0", bytes(record[48:56]))
        self.assertEqual(48, p.pack_batch_header(record, 0, 9, p.READ, 3, 0x44, 7, 1000))

    def test_completion_and_notification(self) -> None:
        completion = p.decode_completion(p.encode_completion(3, 9, 0, 10, 20), 0, 40)
        self.assertEqual(p.Completion(3, 9, 0, 10, 20), completion)
        note = p.decode_notification(p.encode_notification("h:1/a", b"msg", 77), 0, 16 + 5 + 3)
        self.assertEqual(p.Notification("h:1/a", b"msg", 77), note)
        with self.assertRaises(p.MalformedFrame):
            p.decode_notification(struct.pack("<qii", 0, 100, 0), 0, 16)


class TypedErrorsTest(unittest.TestCase):
    def test_every_transfer_status_has_its_own_exception(self) -> None:
        for status in errors.TransferStatus:
            if status == errors.TransferStatus.OK:
                continue
            error = errors.TransferFailedError.of(status)
            self.assertIsInstance(error, errors.TransferFailedError)
            self.assertEqual(status, error.status)
            self.assertIs(type(error), type(errors.TransferFailedError.of(status)))
            self.assertNotEqual(errors.TransferFailedError, type(error), status.name)
        self.assertIsInstance(errors.TransferFailedError.of(11), errors.DaemonGoneError)
        self.assertEqual("UNKNOWN_STATUS(99)", errors.TransferFailedError.of(99).status_name)

    def test_every_control_error_code_has_its_own_exception(self) -> None:
        for code in errors.ControlErrorCode:
            error = errors.ControlError.of(code, "why")
            self.assertEqual(code, error.code)
            self.assertIn(code.name, str(error))
            self.assertNotEqual(errors.ControlError, type(error), code.name)
        self.assertIsInstance(errors.ControlError.of(4, "x"), errors.OverlappingRegionError)


if __name__ == "__main__":
    unittest.main()
