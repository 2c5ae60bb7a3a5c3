# Sourced by the experiments/ablations/gpu_hartmann6*.sh scripts on a GPU machine: unbuffered output, no
# GPU memory preallocation (several processes share the GPU), $OUT (what comes back), the
# carried wheels (.whl: tinygp, blackjax) installed beside the machine's own jax, and the device.
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD || return 1
nvidia-smi -L; python3 -c "import jax; print(jax.__version__, jax.devices())" || true  # information only
