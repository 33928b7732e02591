"""The permutation, the Snowflake layouts and the error codes give exactly what the TypeScript client gives."""
import unittest

import ticketd_client
from ticketd_client import IdPermutation, OpaqueIdError, SnowflakeLayoutError, complete_layout, compose, decompose
from ticketd_client.id_codec import decode_key
from ticketd_client.snowflake_layout import first_id_of

from .vectors import load

_SNAKE = {"timeBits": "time_bits", "workerBits": "worker_bits", "sequenceBits": "sequence_bits"}


class PermutationVectorsTest(unittest.TestCase):
    vectors = load("permutation.json")

    def test_schemes_are_the_same(self) -> None:
        schemes = {k: {"rounds": s.rounds, "tag": s.tag} for k, s in ticketd_client.PERMUTATION_SCHEMES.items()}
        self.assertEqual(schemes, self.vectors["schemes"])
        self.assertEqual(ticketd_client.KEY_BYTES, self.vectors["keyBytes"])

    def test_encode_and_decode_every_pair(self) -> None:
        pairs = 0
        for case in self.vectors["cases"]:
            p = IdPermutation(decode_key(case["key"]), int(case["startAfter"]), int(case["maxId"]), case["scheme"])
            for ordered, opaque in case["pairs"]:
                with self.subTest(scheme=case["scheme"], key=case["keyName"], domain=case["domain"], ordered=ordered):
                    self.assertEqual(p.encode(int(ordered)), int(opaque))
                    self.assertEqual(p.decode(int(opaque)), int(ordered))
                pairs += 1
        self.assertGreater(pairs, 1000)

    def test_runs_encoded_one_by_one_match_the_batch(self) -> None:
        for case in self.vectors["cases"]:
            p = IdPermutation(decode_key(case["key"]), int(case["startAfter"]), int(case["maxId"]), case["scheme"])
            run = case["run"]
            with self.subTest(scheme=case["scheme"], domain=case["domain"]):
                self.assertEqual(p.encode_run(int(run["first"]), len(run["opaque"])), [int(x) for x in run["opaque"]])

    def test_ids_outside_the_domain_are_refused(self) -> None:
        for case in self.vectors["cases"]:
            p = IdPermutation(decode_key(case["key"]), int(case["startAfter"]), int(case["maxId"]), case["scheme"])
            for outside in case["outside"]:
                for call in (p.encode, p.decode):
                    with self.assertRaises(OpaqueIdError) as caught:
                        call(int(outside))
                    self.assertEqual(caught.exception.code, self.vectors["refused"]["code"])

    def test_bad_keys_domains_and_schemes_are_refused_with_the_same_code(self) -> None:
        refused = self.vectors["refused"]
        for bad in refused["keys"]:
            with self.assertRaises(OpaqueIdError) as caught:
                IdPermutation(decode_key(bad["key"]), 0, 1000, "feistel-aes256-v2")
            self.assertEqual(caught.exception.code, bad["code"])
        for bad in refused["domains"]:
            with self.assertRaises(OpaqueIdError) as caught:
                IdPermutation(bytes(range(32)), int(bad["startAfter"]), int(bad["maxId"]), "feistel-aes256-v2")
            self.assertEqual(caught.exception.code, bad["code"])
        for scheme in refused["schemes"]:
            with self.assertRaises(OpaqueIdError):
                IdPermutation(bytes(range(32)), 0, 1000, scheme)


class SnowflakeVectorsTest(unittest.TestCase):
    vectors = load("snowflake.json")

    def test_default_layout_and_epoch(self) -> None:
        d = self.vectors["defaultLayout"]
        self.assertEqual(tuple(ticketd_client.DEFAULT_LAYOUT), (d["timeBits"], d["workerBits"], d["sequenceBits"]))
        self.assertEqual(ticketd_client.DEFAULT_SNOWFLAKE_EPOCH_MS, self.vectors["defaultEpochMs"])

    def test_compose_and_decompose_for_every_layout(self) -> None:
        count = 0
        for case in self.vectors["cases"]:
            layout = complete_layout({_SNAKE[k]: v for k, v in case["given"].items()})
            expected = case["layout"]
            self.assertEqual(tuple(layout), (expected["timeBits"], expected["workerBits"], expected["sequenceBits"]))
            for v in case["ids"]:
                with self.subTest(layout=layout, epoch=case["epochMs"], id=v["id"]):
                    parts = (v["timestampMs"], v["workerId"], v["sequence"])
                    self.assertEqual(compose(*parts, layout, case["epochMs"]), int(v["id"]))
                    self.assertEqual(tuple(decompose(int(v["id"]), layout, case["epochMs"])), parts)
                count += 1
            for out in case["outside"]:
                with self.assertRaises(SnowflakeLayoutError) as caught:
                    first_id_of(out["timestampMs"], 0, layout, case["epochMs"])
                self.assertEqual(caught.exception.code, out["code"])
        self.assertGreater(count, 300)

    def test_refused_layouts(self) -> None:
        for bad in self.vectors["refusedLayouts"]:
            with self.assertRaises(SnowflakeLayoutError) as caught:
                complete_layout({_SNAKE[k]: v for k, v in bad["given"].items()})
            self.assertEqual(caught.exception.code, bad["code"])


class ErrorCodesTest(unittest.TestCase):
    def test_every_error_has_the_typescript_code(self) -> None:
        codes = load("errors.json")["codes"]
        for name, code in codes.items():
            self.assertEqual(getattr(ticketd_client, name).code, code, name)
            self.assertTrue(issubclass(getattr(ticketd_client, name), ticketd_client.TicketClientError))


if __name__ == "__main__":
    unittest.main()
