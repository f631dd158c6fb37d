package simpleauth

import java.sql.SQLTransientConnectionException
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicReference
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class OutageGateSpec extends AnyWordSpec with Matchers {
  private val Ms = 1000000L
  private def outage =
    new DatabaseUnavailable(new SQLTransientConnectionException("down", "08001", new java.net.ConnectException("refused")))
  /** HikariCP's timeout with every connection in use and no failed connection attempt behind it. */
  private def busy = new DatabaseUnavailable(new SQLTransientConnectionException("request timed out after 1000ms"))

  "OutageGate" should {
    "run calls while the database is up, and count the calls still waiting for a thread" in {
      val gate = new OutageGate(1000)
      val first = gate.enter()
      val second = gate.enter()
      gate.waiting shouldBe 2
      gate.run(first)(trial => trial) shouldBe false
      gate.waiting shouldBe 1
      gate.run(second)(_ => "row") shouldBe "row"
      gate.waiting shouldBe 0
    }

    "fail a call that waited the acquire timeout for a thread, without running it" in {
      var now = 0L
      val gate = new OutageGate(1000, () => now)
      val submitted = gate.enter()
      now = 1000 * Ms
      var ran = false
      a[DatabaseUnavailable] should be thrownBy gate.run(submitted)(_ => ran = true)
      ran shouldBe false
      gate.waiting shouldBe 0
      // Waiting is not an outage: the next call runs normally.
      gate.run(gate.enter())(trial => trial) shouldBe false
    }

    "not take a busy pool's timeout for an outage: the next call runs, and is no trial" in {
      val gate = new OutageGate(1000)
      a[DatabaseUnavailable] should be thrownBy gate.run(gate.enter())(_ => throw busy)
      gate.run(gate.enter())(trial => trial) shouldBe false
    }

    "after an outage, let one trial call try the database and fail the others at once" in {
      val gate = new OutageGate(1000)
      a[DatabaseUnavailable] should be thrownBy gate.run(gate.enter())(_ => throw outage)

      val trialStarted = new CountDownLatch(1)
      val finishTrial = new CountDownLatch(1)
      val trialSaw = new AtomicReference[Option[Boolean]](None)
      val trial = new Thread(() => {
        gate.run(gate.enter()) { isTrial =>
          trialSaw.set(Some(isTrial))
          trialStarted.countDown()
          finishTrial.await(10, TimeUnit.SECONDS)
        }
        ()
      })
      trial.start()
      trialStarted.await(10, TimeUnit.SECONDS) shouldBe true
      trialSaw.get shouldBe Some(true)

      var ran = false
      a[DatabaseUnavailable] should be thrownBy gate.run(gate.enter())(_ => ran = true)
      ran shouldBe false

      finishTrial.countDown()
      trial.join(10000)
      // The trial succeeded: the database is up again and calls are no trials.
      gate.run(gate.enter())(isTrial => isTrial) shouldBe false
    }

    "keep the database down while trials fail, one trial after the other" in {
      val gate = new OutageGate(1000)
      a[DatabaseUnavailable] should be thrownBy gate.run(gate.enter())(_ => throw outage)
      for (_ <- 1 to 3) {
        var wasTrial = false
        a[DatabaseUnavailable] should be thrownBy gate.run(gate.enter()) { isTrial => wasTrial = isTrial; throw outage }
        wasTrial shouldBe true
      }
      gate.run(gate.enter())(isTrial => isTrial) shouldBe true
      gate.run(gate.enter())(isTrial => isTrial) shouldBe false
    }

    "not take other failures for an outage" in {
      val gate = new OutageGate(1000)
      an[IllegalStateException] should be thrownBy gate.run(gate.enter())(_ => throw new IllegalStateException("bug"))
      gate.run(gate.enter())(isTrial => isTrial) shouldBe false
    }
  }
}
