"""The profiler's own parts that need no running stack."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flamegraph  # noqa: E402


def test_categories_are_shares_of_all_samples(tmp_path):
    collapsed = tmp_path / "s.collapsed"
    collapsed.write_text(
        "java/lang/Thread.run;simpleauth/TokenSigner.issue;com/amazon/corretto/crypto/provider/EvpSignature.engineSign 60\n"
        "java/lang/Thread.run;org/bouncycastle/crypto/generators/Argon2BytesGenerator.fillMemoryBlocks 20\n"
        "java/lang/Thread.run;io/netty/channel/epoll/EpollEventLoop.run 15\n"
        "java/lang/Thread.run;simpleauth/Api.something 5\n"
        "not a sample line\n")
    shares = flamegraph.categorize(collapsed)
    assert shares == {"RSA signing": 60.0, "argon2id": 20.0, "HTTP / network": 15.0, "other": 5.0}


def test_leaf_frames_decide_before_callers(tmp_path):
    collapsed = tmp_path / "s.collapsed"
    # An HTTP handler calling into JSON: the sample is JSON's, not HTTP's.
    collapsed.write_text("actix_http::h1::dispatcher::poll;serde_json::ser::to_vec 10\n")
    assert flamegraph.categorize(collapsed) == {"JSON": 100.0}


def test_aws_lc_rsaz_table_lookup_is_rsa(tmp_path):
    # AWS-LC's constant-time window lookup inside RSAZ modular exponentiation, as perf shows it (leaf only).
    collapsed = tmp_path / "s.collapsed"
    collapsed.write_text("aws_lc_0_47_0_extract_multiplier_2x20_win5;0xf162574156415541 10\n")
    assert flamegraph.categorize(collapsed) == {"RSA signing": 100.0}


def test_empty_profile_has_no_shares(tmp_path):
    collapsed = tmp_path / "s.collapsed"
    collapsed.write_text("")
    assert flamegraph.categorize(collapsed) == {}


def test_the_leaf_most_categorized_frame_wins(tmp_path):
    collapsed = tmp_path / "s.collapsed"
    # JSON written into a socket buffer: the socket write is the leaf, so the sample is network's.
    collapsed.write_text("serde_json::ser::to_vec;tcp_sendmsg 4\nserde_json::ser::to_vec;memcpy 1\n")
    assert flamegraph.categorize(collapsed) == {"HTTP / network": 80.0, "JSON": 20.0}


def test_large_collapsed_stacks_are_gzipped_and_small_ones_kept(tmp_path):
    import gzip
    big, small = tmp_path / "akka.collapsed", tmp_path / "actix.collapsed"
    text = "java/lang/Thread.run;RSA_sign 3\n" * 100
    big.write_text(text)
    small.write_text("a;b 1\n")
    kept = flamegraph.compress_if_large(big, limit=1000)
    assert kept == tmp_path / "akka.collapsed.gz" and not big.exists()
    assert gzip.decompress(kept.read_bytes()).decode() == text
    assert flamegraph.compress_if_large(small, limit=1000) == small and small.read_text() == "a;b 1\n"
    assert flamegraph.compress_if_large(tmp_path / "missing.collapsed") == tmp_path / "missing.collapsed"


def test_large_raw_outputs_are_kept_out_of_the_result_set(tmp_path, monkeypatch):
    monkeypatch.setattr(flamegraph, "ROOT", tmp_path)
    run = tmp_path / "results" / "20260101T000000Z-profile"
    run.mkdir(parents=True)
    small, big = run / "a.collapsed", run / "b.collapsed.gz"
    small.write_bytes(b"x" * 10)
    big.write_bytes(b"x" * 2000)
    assert flamegraph.keep_out_of_git(small, limit=1000) == small and small.exists()
    moved = flamegraph.keep_out_of_git(big, limit=1000)
    assert moved == tmp_path / ".cache" / "profiles" / run.name / "b.collapsed.gz"
    assert moved.exists() and not big.exists()


def test_summary_says_the_key_and_the_load_it_was_taken_at(tmp_path):
    env = {"timestamp": "t", "cpu": "cpu", "cores": 2, "commit": "abc", "connections": 64, "seconds": 20,
           "warmup": 40, "key_type": "p-256", "rate": 400.0, "event": "wall"}
    text = flamegraph.write_summary(tmp_path, env, [{"name": "zio", "rps_while_profiling": 400, "categories": {}}])
    assert "key p-256" in text and "oha `users` logins at 400.0/s" in text and "event wall" in text
    env["rate"] = None
    assert "wrk `users` scenario, c=64" in flamegraph.write_summary(tmp_path, env, [])


def test_a_negative_rate_is_refused_before_anything_runs(capsys):
    assert flamegraph.main(["--rate", "-5", "--out", "/nonexistent"]) == 2
    assert "--rate must be positive" in capsys.readouterr().err
