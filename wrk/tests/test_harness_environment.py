"""library_versions reads the versions a stack resolved, also where its build is the root's (the Cargo workspace of
actix and axum, the sbt build of akka and zio), and only from a build of the stack's own kind."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import stackctl  # noqa: E402
from harness import environment  # noqa: E402

LOCK = '[[package]]\nname = "tokio"\nversion = "1.2.3"\n\n[[package]]\nname = "serde"\nversion = "9.9.9"\n'
SBT = 'ThisBuild / scalaVersion := "3.3.7"\nval V = "2.8.5"\nlazy val a = (project in file("a")).settings(\n' \
      '  libraryDependencies ++= Seq("com.typesafe.akka" %% "akka-stream" % V, "org.x" % "other" % "1.0"))\n'


def stack(root: Path, name: str, build: list[str], libraries: list[str]) -> stackctl.Stack:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    return stackctl.Stack(name, d, {"build": build, "libraries": libraries, "artifact": "none"})


def test_a_workspace_member_reads_the_root_lock(tmp_path):
    (tmp_path / "Cargo.lock").write_text(LOCK)
    (tmp_path / "build.sbt").write_text(SBT)
    s = stack(tmp_path, "rusty", ["cargo", "build"], ["tokio"])
    (s.dir / "Cargo.toml").write_text("[package]\nname = \"rusty\"\n")
    assert environment.library_versions(s) == {"tokio": "1.2.3"}


def test_a_project_of_the_root_sbt_build_reads_its_build_sbt(tmp_path):
    (tmp_path / "Cargo.lock").write_text(LOCK)
    (tmp_path / "build.sbt").write_text(SBT)
    s = stack(tmp_path, "scaly", ["../sbt", "-batch", "a/assembly"], ["akka-stream"])
    assert environment.library_versions(s) == {"akka-stream": "2.8.5", "scala": "3.3.7"}


def test_a_stack_of_another_kind_reads_neither_root_build(tmp_path):
    (tmp_path / "Cargo.lock").write_text(LOCK)
    (tmp_path / "build.sbt").write_text(SBT)
    s = stack(tmp_path, "javay", ["mvn", "package"], ["tokio", "akka-stream"])
    assert environment.library_versions(s) == {}
