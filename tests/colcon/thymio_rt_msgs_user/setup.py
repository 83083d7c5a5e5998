"""The test fixture's Python package (ament_python): one entry point, switch_controller_check."""
from setuptools import setup

PACKAGE = "thymio_rt_msgs_user"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=[PACKAGE],
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    entry_points={
        "console_scripts": [f"switch_controller_check = {PACKAGE}.switch_check:main"],
    },
)
