"""Installs htac (HTA's notebook API over libhta) and htatrace (the tracer's Python front) offline, with
the machine's own pip and setuptools:  make python   (or: python3 -m pip install --no-build-isolation ./python).
The shared libraries are taken from the build folder (make builds them) into the packages."""
import os
import shutil

from setuptools import setup

here = os.path.dirname(os.path.abspath(__file__))
build = os.path.join(os.path.dirname(here), os.environ.get("BUILD", "build"))
copies = []
for lib, pkg in (("libhta.so", "htac"), ("libhtatrace.so", "htatrace")):
    src = os.path.join(build, lib)
    if os.path.exists(src):
        copies.append(os.path.join(here, pkg, lib))
        shutil.copy(src, copies[-1])
if not copies or not copies[0].endswith("libhta.so"):
    raise SystemExit(f"htac: no {os.path.join(build, 'libhta.so')}: run make first")

try:
    setup(
        name="htac",
        version="0.1.0",
        description="Holistic Trace Analysis's notebook API, backed by hta's C library",
        packages=["htac", "htac.analyzers", "htac.utils", "htatrace"],
        package_data={"htac": ["libhta.so"], "htatrace": ["libhtatrace.so"]},
        python_requires=">=3.8",
        install_requires=[],  # numpy and pandas: the machine's (python3-numpy, python3-pandas)
    )
finally:
    # the copies go with the installed package only: in the checkout, the package finds build/'s library
    for c in copies:
        os.remove(c)
