"""``python -m nrt``: the ``nrt`` command's NEFF packer, with the wheel alone.

    python -m nrt neff pack DIR FILE [--name NAME] [--hash {sha256,md5}]

packs a NEFF source tree (e.g. ``examples/copy`` of the nrt-rs checkout)
into the NEFF ``nrt.Model.load_from_neff`` loads, exactly as ``nrt neff
pack`` does (one packer, in the native module), so a Python user needs no
second build for the command. Errors print one ``python -m nrt: error:``
line and exit 1, as the command's do.
"""

import argparse as _argparse
import sys as _sys

from . import _nrt


def _main(argv=None) -> int:
    parser = _argparse.ArgumentParser(prog="python -m nrt", description="nrt-rs from Python: the nrt command's NEFF packer")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="neff")
    neff = verbs.add_parser("neff", help="NEFF files")
    neff_verbs = neff.add_subparsers(dest="neff_verb", required=True, metavar="pack")
    pack = neff_verbs.add_parser("pack", help="pack a NEFF source tree into a NEFF file (as `nrt neff pack`)")
    pack.add_argument("dir", help="the source tree (members as files, neff-header.json; *.asm programs are assembled)")
    pack.add_argument("file", help="the NEFF file to write")
    pack.add_argument("--name", help="the model name in the header")
    pack.add_argument("--hash", choices=["sha256", "md5"], help="the digest (default: the one the header's package version implies)")
    args = parser.parse_args(argv)
    try:
        print(_nrt._pack_source_tree(args.dir, args.file, args.name, args.hash))
    except ValueError as e:
        print(f"python -m nrt: error: {e}", file=_sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    _sys.exit(_main())
