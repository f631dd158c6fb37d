package simpleauth

import akka.actor.typed.{ActorSystem, DispatcherSelector}
import akka.actor.typed.scaladsl.Behaviors
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, TimeUnit}
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

/** application.conf's default dispatcher (akka-http's streams and akka's TCP actors): one thread per two cores. */
class DispatcherSpec extends AnyWordSpec with Matchers {
  "The default dispatcher" should {
    "run its tasks on one thread per two cores, at least one, however many wait" in {
      val system = ActorSystem(Behaviors.empty[Nothing], "dispatcher-spec")
      try {
        val ec = system.dispatchers.lookup(DispatcherSelector.default())
        val threads = ConcurrentHashMap.newKeySet[String]()
        val done = new CountDownLatch(40)
        // Tasks that each hold their thread a moment, queued from outside the pool: a pool with more threads
        // (the fork-join pool sized to the cores) spreads them over every one of its threads.
        (1 to 40).foreach { _ =>
          ec.execute { () =>
            threads.add(Thread.currentThread().getName)
            Thread.sleep(5)
            done.countDown()
          }
        }
        done.await(20, TimeUnit.SECONDS) shouldBe true
        val cores = Runtime.getRuntime.availableProcessors()
        threads.size shouldBe math.max(1, math.ceil(cores * 0.5).toInt)
      } finally system.terminate()
    }
  }
}
