"""The Lua scripts that make ticket state changes atomic in Redis.

Keys (single Redis/valkey node; scripts derive keys from ticket ids):

- ``mm:t:<id>``   hash, one ticket (fields in ``store.TicketRecord``)
- ``mm:q:<game>:<options hash>:<n>``  sorted set, the searching tickets that accept
  ``n`` players, scored by rating; member ``<id>|<size>|<enqueued ms>|<bots>``
  (bots: ``0`` none, else the level of the bots the ticket accepts)
- ``mm:queues``   set of every queue key ever used
- ``mm:p:<player>``  the ticket a player is queued with (one at a time)
- ``mm:pt:<jti>``  a party token already used (kept while the token is valid)
- ``mm:idem:<digest of caller and key>``  an idempotency key of Enqueue:
  ``<ticket id>|<digest of the request>``, kept the ticket's whole life (its
  search, claim and result time); an ended ticket's hash is kept at least as
  long as its key (``finish``)
- ``mm:exp``      sorted set: ticket id by expiry time (ms)
- ``mm:watch``    sorted set: ticket id by watcher deadline (ms)
- channel ``mm:events``: ticket ids (space-separated), published when tickets end
- stream ``mm:bots``: one entry per match with bot seats, for the bot worker

Ticket states: ``searching`` -> ``claimed`` (by one matchmaker, token in
``claim``) -> ``matched``; ``searching`` -> ``cancelled`` / ``expired``;
``claimed`` -> ``searching`` again if creating the match failed.
"""

from __future__ import annotations

_FINISH = """
local ended = {}
local clock = redis.call('TIME')
local now_ms = clock[1] * 1000 + math.floor(clock[2] / 1000)
local function finish(key, id, state, reason, ttl, in_queues)
  local f = redis.call('HMGET', key, 'member', 'queues', 'players', 'idem')
  if in_queues then
    for _, q in ipairs(cjson.decode(f[2])) do redis.call('ZREM', q, f[1]) end
  end
  for _, p in ipairs(cjson.decode(f[3])) do
    local pk = 'mm:p:' .. p
    if redis.call('GET', pk) == id then redis.call('DEL', pk) end
  end
  redis.call('ZREM', 'mm:exp', id)
  redis.call('ZREM', 'mm:watch', id)
  redis.call('HSET', key, 'state', state, 'reason', reason, 'ended_ms', now_ms)
  redis.call('HDEL', key, 'claim')
  -- A ticket made under an idempotency key stays readable as long as the key
  -- answers with it (a retry gets the ticket, never an unknown id).
  local keep = tonumber(ttl)
  if f[4] then keep = math.max(keep, redis.call('PTTL', f[4])) end
  redis.call('PEXPIRE', key, keep)
  ended[#ended + 1] = id
end
-- One message for every ticket a script ended: space-separated ids.
local function publish_ended()
  if #ended > 0 then redis.call('PUBLISH', 'mm:events', table.concat(ended, ' ')) end
end
"""

# ARGV: id, hash ttl ms, expires ms, rating, member, players json, queues json,
#       flat field list json, party token ids json, party token memory ms,
#       idempotency key ("" for none), request digest.
# Answers {1}, {0, player, ticket} (a player already queued), {2, token id}
# (a party token already used), {3, ticket, state} (the key made that ticket
# for the same request: nothing new) or {4, ticket} (the key made that ticket
# for another request: nothing done). A new key gets the hash's ttl.
ENQUEUE = """
if ARGV[11] ~= '' then
  local made = redis.call('GET', ARGV[11])
  if made then
    local sep = string.find(made, '|', 1, true)
    local tid = string.sub(made, 1, sep - 1)
    if string.sub(made, sep + 1) ~= ARGV[12] then return {4, tid} end
    return {3, tid, redis.call('HGET', 'mm:t:' .. tid, 'state') or 'expired'}
  end
end
local players = cjson.decode(ARGV[6])
for _, p in ipairs(players) do
  local held = redis.call('GET', 'mm:p:' .. p)
  if held then
    local st = redis.call('HGET', 'mm:t:' .. held, 'state')
    if st == 'searching' or st == 'claimed' then return {0, p, held} end
  end
end
local consents = cjson.decode(ARGV[9])
for _, j in ipairs(consents) do
  if redis.call('EXISTS', 'mm:pt:' .. j) == 1 then return {2, j} end
end
for _, j in ipairs(consents) do redis.call('SET', 'mm:pt:' .. j, ARGV[1], 'PX', ARGV[10]) end
local key = 'mm:t:' .. ARGV[1]
redis.call('HSET', key, unpack(cjson.decode(ARGV[8])))
redis.call('PEXPIRE', key, ARGV[2])
for _, p in ipairs(players) do redis.call('SET', 'mm:p:' .. p, ARGV[1], 'PX', ARGV[2]) end
for _, q in ipairs(cjson.decode(ARGV[7])) do
  redis.call('ZADD', q, ARGV[4], ARGV[5])
  redis.call('SADD', 'mm:queues', q)
end
redis.call('ZADD', 'mm:exp', ARGV[3], ARGV[1])
if ARGV[11] ~= '' then redis.call('SET', ARGV[11], ARGV[1] .. '|' .. ARGV[12], 'PX', ARGV[2]) end
return {1}
"""

# ARGV: id, new state, reason, result ttl ms. Ends a searching ticket;
# answers {1, new state} or {0, the state it is in}.
END = (
    _FINISH
    + """
local key = 'mm:t:' .. ARGV[1]
local st = redis.call('HGET', key, 'state')
if not st then return {0, 'missing'} end
if st ~= 'searching' then return {0, st} end
finish(key, ARGV[1], ARGV[2], ARGV[3], ARGV[4], true)
publish_ended()
return {1, ARGV[2]}
"""
)

# ARGV: now ms, claim timeout ms, result ttl ms, limit.
# Expires overdue tickets and cancels those whose watchers are gone.
SWEEP = (
    _FINISH
    + """
local now = tonumber(ARGV[1])
local done = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', 'mm:exp', '-inf', now, 'LIMIT', 0, ARGV[4])) do
  local key = 'mm:t:' .. id
  local st = redis.call('HGET', key, 'state')
  if st == 'searching' then
    finish(key, id, 'expired', 'expired', ARGV[3], true); done = done + 1
  elseif st == 'claimed' then
    if tonumber(redis.call('HGET', key, 'expires_ms')) + tonumber(ARGV[2]) < now then
      finish(key, id, 'expired', 'claim_timeout', ARGV[3], false); done = done + 1
    end
  else
    redis.call('ZREM', 'mm:exp', id)
  end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', 'mm:watch', '-inf', now, 'LIMIT', 0, ARGV[4])) do
  local key = 'mm:t:' .. id
  local st = redis.call('HGET', key, 'state')
  if st == 'searching' then
    finish(key, id, 'cancelled', 'watcher_lost', ARGV[3], true); done = done + 1
  elseif st ~= 'claimed' then
    redis.call('ZREM', 'mm:watch', id)
  end
end
publish_ended()
return done
"""
)

# KEYS: queues. Answers one string per queue, "member\tscore\n..." (one bulk
# string per queue parses far faster client-side than 2 per member).
READ_QUEUES = """
local out = {}
for i, q in ipairs(KEYS) do
  local rows = redis.call('ZRANGE', q, 0, -1, 'WITHSCORES')
  local lines = {}
  for j = 1, #rows, 2 do lines[#lines + 1] = rows[j] .. '\\t' .. rows[j + 1] end
  out[i] = table.concat(lines, '\\n')
end
return out
"""

# KEYS[1]: the queue the groups were read from.
# ARGV: now ms, claim token, groups json ([[member, ...], ...]).
# Claims each group whole or not at all. Answers json
# {"ok": [1/0 per group], "tickets": {id: [players json, options json, clock]}} with
# what match creation needs of every claimed ticket.
CLAIM = """
local now = tonumber(ARGV[1])
local res = {}
local info = {}
local any = false
for gi, group in ipairs(cjson.decode(ARGV[3])) do
  local ok = 1
  for _, m in ipairs(group) do
    local key = 'mm:t:' .. string.match(m, '^[^|]+')
    local f = redis.call('HMGET', key, 'state', 'expires_ms')
    local st = f[1]
    if st ~= 'searching' then
      ok = 0
      if st ~= 'claimed' then redis.call('ZREM', KEYS[1], m) end
    elseif tonumber(f[2]) <= now then
      ok = 0
    end
  end
  if ok == 1 then
    for _, m in ipairs(group) do
      local key = 'mm:t:' .. string.match(m, '^[^|]+')
      redis.call('HSET', key, 'state', 'claimed', 'claim', ARGV[2])
      local f = redis.call('HMGET', key, 'queues', 'players', 'opts', 'tc')
      for _, q in ipairs(cjson.decode(f[1])) do
        redis.call('ZREM', q, m)
      end
      info[string.match(m, '^[^|]+')] = {f[2], f[3] or '', f[4] or ''}
      any = true
    end
  end
  res[gi] = ok
end
if not any then info = {_ = 0} end
return cjson.encode({ok = res, tickets = info})
"""

# ARGV: claim token, result ttl ms, matches json
#   [{"tickets": [id...], "match_id": s, "seats": {id: {player: seat}},
#     "players": n, "bots": k, "game": g, "bot_players": {player: seat}}]
# Marks claimed tickets matched; queues a bot job per match with bots.
FINALIZE = (
    _FINISH
    + """
local done = 0
for _, m in ipairs(cjson.decode(ARGV[3])) do
  for _, id in ipairs(m.tickets) do
    local key = 'mm:t:' .. id
    local f = redis.call('HMGET', key, 'state', 'claim')
    if f[1] == 'claimed' and f[2] == ARGV[1] then
      redis.call('HSET', key, 'match_id', m.match_id, 'seats', cjson.encode(m.seats[id]),
                 'player_count', m.players, 'nbots', m.bots)
      finish(key, id, 'matched', '', ARGV[2], false)
      done = done + 1
    end
  end
  if m.bots > 0 then
    redis.call('XADD', 'mm:bots', 'MAXLEN', '~', 100000, '*', 'match_id', m.match_id,
               'game', m.game, 'bots', cjson.encode(m.bot_players))
  end
end
publish_ended()
return done
"""
)

# ARGV: claim token, ids json, max failures, result ttl ms. Puts claimed
# tickets back in their queues, or ends them (expired, "match_refused") once
# match creation failed for them ``max failures`` times (0: do not count).
RELEASE = (
    _FINISH
    + """
local done = 0
for _, id in ipairs(cjson.decode(ARGV[2])) do
  local key = 'mm:t:' .. id
  local f = redis.call('HMGET', key, 'state', 'claim')
  if f[1] == 'claimed' and f[2] == ARGV[1] then
    if tonumber(ARGV[3]) > 0 and redis.call('HINCRBY', key, 'failures', 1) >= tonumber(ARGV[3]) then
      finish(key, id, 'expired', 'match_refused', ARGV[4], false)
    else
      redis.call('HSET', key, 'state', 'searching')
      redis.call('HDEL', key, 'claim')
      local g = redis.call('HMGET', key, 'member', 'rating', 'queues')
      for _, q in ipairs(cjson.decode(g[3])) do
        redis.call('ZADD', q, g[2], g[1])
      end
    end
    done = done + 1
  end
end
publish_ended()
return done
"""
)
