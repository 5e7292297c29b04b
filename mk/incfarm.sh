#!/bin/sh
# Builds the include folder of one layer: links to exactly the source folders
# and public headers that layer may use (src/layers.txt), so that an include
# of anything else fails to compile.   mk/incfarm.sh BUILD_INC LAYER
set -eu
inc=$1/$2; layer=$2
top=$(pwd)
allowed=$(sed -n "s/^$layer:\(.*\)/\1/p" src/layers.txt)
rm -rf "$inc"; mkdir -p "$inc/hta"
for l in $layer $allowed; do
  [ -d "src/$l" ] && ln -s "$top/src/$l" "$inc/$l"
  for h in $(sed -n "s/^headers $l:\(.*\)/\1/p" src/layers.txt); do ln -s "$top/include/hta/$h" "$inc/hta/$h"; done
done
touch "$inc/.stamp"
