# requires: git
# git: init, commits with fixed identities and dates, log, diff, show, gc, fsck.
export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=Tester GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=Tester GIT_COMMITTER_EMAIL=t@example.com
export GIT_AUTHOR_DATE="2020-01-01T00:00:00Z" GIT_COMMITTER_DATE="2020-01-01T00:00:00Z"
set -e
git init -q -b main repo
cd repo
for i in 1 2 3 4 5; do
    mkdir -p "dir$i"
    seq 1 $((i * 500)) | awk -v i=$i '{ print "line " $1 * i }' >"dir$i/file.txt"
    echo "commit $i" >>README
    git add -A
    git commit -q -m "change number $i"
done
sed -i 's/line 1/LINE 1/' dir3/file.txt
git commit -q -am "edit dir3"
git log --format='%H %s'
git diff HEAD~3 HEAD --stat
git diff HEAD~1 HEAD | head -40
git show --format=%s HEAD~2 -- README
git gc -q
git fsck --full && echo fsck ok
git count-objects -v | grep -E '^(count|in-pack|packs)'
git rev-list --all | wc -l
