# Source-mapping tests (tests/lineinfo) compare every instruction with nvdisasm -g/-gi and check fatbinary
# extraction against cuobjdump; both come from PyPI wheels (nvcc itself is on the CI machine).
# Idempotent: pip skips what is installed. Sourced by .ci/run inside its virtual environment.
python -m pip install --quiet "nvidia-cuda-nvdisasm>=13,<14" "nvidia-cuda-cuobjdump>=13,<14"
