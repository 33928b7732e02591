"""AES-256 of single blocks: FIPS-197's own example and OpenSSL's output for other keys."""
import unittest

from ticketd_client.aes256 import SBOX, Aes256, expand_key

from .vectors import load


class Aes256Test(unittest.TestCase):
    def test_fips_197_appendix_c3(self) -> None:
        key = bytes(range(32))
        out = Aes256(key).encrypt_block(bytes.fromhex("00112233445566778899aabbccddeeff"))
        self.assertEqual(out.hex(), "8ea2b7ca516745bfeafc49904b496089")

    def test_fips_197_key_expansion_a3(self) -> None:
        # FIPS-197 appendix A.3: the last round-key words of its 256-bit example key.
        key = bytes.fromhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        w = expand_key(key)
        self.assertEqual(len(w), 60)
        self.assertEqual(w[8], 0x9BA35411)
        self.assertEqual(w[59], 0x706C631E)

    def test_sbox_is_the_standard_one(self) -> None:
        self.assertEqual((SBOX[0x00], SBOX[0x01], SBOX[0x53], SBOX[0xFF]), (0x63, 0x7C, 0xED, 0x16))
        self.assertEqual(len(set(SBOX)), 256)

    def test_matches_openssl_on_the_shared_vectors(self) -> None:
        blocks = load("aes256.json")["blocks"]
        self.assertGreater(len(blocks), 10)
        for block in blocks:
            out = Aes256(bytes.fromhex(block["key"])).encrypt_block(bytes.fromhex(block["plaintext"]))
            self.assertEqual(out.hex(), block["ciphertext"], block)

    def test_refuses_keys_of_other_lengths(self) -> None:
        with self.assertRaises(ValueError):
            Aes256(bytes(16))


if __name__ == "__main__":
    unittest.main()
