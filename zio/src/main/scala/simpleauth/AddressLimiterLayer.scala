package simpleauth

import zio.*

/** The core's [[AddressLimiter]] (contract §8) as this stack's layer, from LOGIN_IP_MAX_FAILURES and the window. */
object AddressLimiterLayer:
  val live: URLayer[Settings, AddressLimiter] = ZLayer.fromFunction((cfg: Settings) =>
    AddressLimiter(cfg.limits.loginIpMaxFailures, cfg.limits.loginFailureWindowSeconds)
  )
