#!/bin/sh
# Entry point of the services image: the first argument picks the service,
# the rest goes to it, e.g. `tabletop-service rules --workers 2`.
set -eu

usage() {
    echo "usage: tabletop-service {rules|match|matchmaking|tournaments|bots|gateway} [options...]" >&2
    echo "       tabletop-service <service> --help" >&2
}

if [ "$#" -eq 0 ]; then
    usage
    exit 64
fi

service="$1"
shift
case "$service" in
    rules|match|matchmaking|tournaments|bots|gateway)
        exec python -m "services.$service" "$@"
        ;;
    -h|--help|help)
        usage
        exit 0
        ;;
    *)
        echo "tabletop-service: unknown service '$service'" >&2
        usage
        exit 64
        ;;
esac
