// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/nearest_names.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("edit distance: insertions, deletions, substitutions, transpositions, bounded") {
  CHECK(EditDistance("vfs_read", "vfs_read", 3) == 0);
  CHECK(EditDistance("vfs_raed", "vfs_read", 3) == 1);  // a transposition
  CHECK(EditDistance("vfs_rea", "vfs_read", 3) == 1);
  CHECK(EditDistance("vfs_reads", "vfs_read", 3) == 1);
  CHECK(EditDistance("vfs_rxad", "vfs_read", 3) == 1);
  CHECK(EditDistance("kitten", "sitting", 5) == 3);
  CHECK(EditDistance("a", "abcdefgh", 2) == 3);  // more than the limit: limit + 1
  CHECK(EditDistance("", "", 1) == 0);
}

TEST_CASE("nearest names: near misses first, then names that contain it, each once") {
  NearestNames nearest("vfs_raed", 3);
  for (const char* name :
       {"do_sys_open", "vfs_readv", "vfs_read", "vfs_read", "vfs_write", "vcs_read", "xvfs_raed_all"})
    nearest.Offer(name);
  CHECK(nearest.Take() == std::vector<std::string>{"vfs_read", "vcs_read", "vfs_readv"});
  NearestNames part("compu");
  for (const char* name : {"compute", "main", "recompute_all", "cmp"}) part.Offer(name);
  CHECK(part.Take() == std::vector<std::string>{"compute", "recompute_all"});
  // A qualified name with a path part left out, or one too many.
  NearestNames path("ledger::Account::deposit");
  for (const char* name :
       {"ledger::bank::accounts::Account::deposit", "ledger::Account::withdraw", "deposit", "other::Account::deposit"})
    path.Offer(name);
  CHECK(path.Take() == std::vector<std::string>{"ledger::bank::accounts::Account::deposit", "deposit"});
  NearestNames go("net/http.Header.Get");
  for (const char* name : {"http.Header.Get", "net/http.Header.Set", "net/textproto.MIMEHeader.Get"}) go.Offer(name);
  CHECK(go.Take() == std::vector<std::string>{"net/http.Header.Set", "http.Header.Get"});
  // An unqualified name a few edits from a qualified one's last part.
  NearestNames unqualified("handel");
  for (const char* name : {"main.handle", "main.main", "net/http.Header.Get", "handle_all_of_it"})
    unqualified.Offer(name);
  CHECK(unqualified.Take() == std::vector<std::string>{"main.handle"});
  NearestNames none("nosuchfunc");
  for (const char* name : {"vfs_read", "main"}) none.Offer(name);
  CHECK(none.Take().empty());
}
