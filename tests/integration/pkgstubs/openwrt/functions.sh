# Test stub of OpenWrt's /lib/functions.sh: the UCI part init and hotplug scripts use.
# config_load reads $UCI_CONFIG_DIR/NAME, whose syntax (config/option/list lines with quoted
# values) is shell, calling config_cb/option_cb/list_cb as the real one does; values are kept
# as CONFIG_<section>_<option> for config_get.

reset_cb() {
	config_cb() { :; }
	option_cb() { :; }
	list_cb() { :; }
}
reset_cb

config() {
	CONFIG_SECTION=${2:-cfg$$}
	config_cb "$1" "$CONFIG_SECTION"
}

option() {
	eval "CONFIG_${CONFIG_SECTION}_$1=\$2"
	option_cb "$1" "$2"
}

list() {
	eval "CONFIG_${CONFIG_SECTION}_$1=\"\${CONFIG_${CONFIG_SECTION}_$1:+\$CONFIG_${CONFIG_SECTION}_$1 }\$2\""
	list_cb "$1" "$2"
}

config_load() {
	[ -f "${UCI_CONFIG_DIR:-/etc/config}/$1" ] || return 1
	. "${UCI_CONFIG_DIR:-/etc/config}/$1"
	config_cb
}

config_get() { # VAR SECTION OPTION [DEFAULT]
	eval "$1=\${CONFIG_${2}_${3}-\$4}"
}

config_get_bool() { # VAR SECTION OPTION [DEFAULT]
	local _v
	eval "_v=\${CONFIG_${2}_${3}-\$4}"
	case "$_v" in
	1|on|true|yes|enabled) eval "$1=1" ;;
	0|off|false|no|disabled) eval "$1=0" ;;
	*) eval "$1=\$4" ;;
	esac
}

# logd is not here: log lines go to the test's state directory
logger() {
	echo "logger: $*" >>"$STUB_STATE/logger"
}
